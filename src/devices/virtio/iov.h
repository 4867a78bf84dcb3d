/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers over iovec arrays that point into guest RAM (a popped
 * virtqueue chain): copy bytes in and out across buffer boundaries, drop a
 * header from the front or a status byte from the back. A driver may split
 * any field across descriptors, so devices never assume iov[0] holds it.
 */
#ifndef HVM_DEVICES_VIRTIO_IOV_H
#define HVM_DEVICES_VIRTIO_IOV_H

#include <stddef.h>
#include <string.h>
#include <sys/uio.h>

/* Copy up to LEN bytes starting at byte OFF of IOV into DST; bytes copied. */
static inline size_t iov_to_buf(const struct iovec *iov, unsigned int nr,
				size_t off, void *dst, size_t len)
{
	size_t done = 0;

	for (unsigned int i = 0; i < nr && done < len; i++) {
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - off;
		if (n > len - done)
			n = len - done;
		memcpy((char *)dst + done, (char *)iov[i].iov_base + off, n);
		done += n;
		off = 0;
	}
	return done;
}

/* Copy up to LEN bytes from SRC into IOV from its start; bytes copied. */
static inline size_t buf_to_iov(const struct iovec *iov, unsigned int nr,
				const void *src, size_t len)
{
	size_t done = 0;

	for (unsigned int i = 0; i < nr && done < len; i++) {
		size_t n = iov[i].iov_len;

		if (n > len - done)
			n = len - done;
		memcpy(iov[i].iov_base, (const char *)src + done, n);
		done += n;
	}
	return done;
}

/* Drop LEN bytes from the front of *IOV / *NR (in place). */
static inline void iov_drop_front(struct iovec **iov, unsigned int *nr,
				  size_t len)
{
	while (*nr && len) {
		if (len < (*iov)->iov_len) {
			(*iov)->iov_base = (char *)(*iov)->iov_base + len;
			(*iov)->iov_len -= len;
			return;
		}
		len -= (*iov)->iov_len;
		(*iov)++;
		(*nr)--;
	}
}

/* Drop LEN bytes from the back of IOV / *NR (in place). */
static inline void iov_drop_back(struct iovec *iov, unsigned int *nr,
				 size_t len)
{
	while (*nr && len) {
		struct iovec *last = &iov[*nr - 1];

		if (len < last->iov_len) {
			last->iov_len -= len;
			return;
		}
		len -= last->iov_len;
		(*nr)--;
	}
}

static inline size_t iov_length(const struct iovec *iov, unsigned int nr)
{
	size_t len = 0;

	for (unsigned int i = 0; i < nr; i++)
		len += iov[i].iov_len;
	return len;
}

#endif
