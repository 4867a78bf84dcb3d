// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * newc cpio writer (Linux's Documentation/driver-api/early-userspace/
 * buffer-format.rst): a 110-byte ASCII header, the NUL-terminated name
 * padded to 4 bytes, the data padded to 4 bytes; "TRAILER!!!" ends it.
 * Every member is owned by root, dated 0, so an archive depends on its
 * contents only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image/cpio.h"

#define NEWC_HDR_SIZE 110

void cpio_init(struct cpio *c)
{
	*c = (struct cpio){ .next_ino = 1 };
}

static void append(struct cpio *c, const void *data, size_t len)
{
	if (c->error)
		return;
	if (len > c->cap - c->len) {
		size_t cap = c->cap ? c->cap : 64 * 1024;
		uint8_t *buf;

		while (cap - c->len < len) {
			if (cap > SIZE_MAX / 2) {
				c->error = -ENOMEM;
				return;
			}
			cap *= 2;
		}
		buf = realloc(c->buf, cap);
		if (!buf) {
			c->error = -ENOMEM;
			return;
		}
		c->buf = buf;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, data, len);
	c->len += len;
}

static void pad4(struct cpio *c)
{
	static const uint8_t zeros[4];

	append(c, zeros, (4 - c->len % 4) % 4);
}

void cpio_add(struct cpio *c, const char *name, mode_t mode, const void *data,
	      size_t size, unsigned int rdev_major, unsigned int rdev_minor)
{
	char hdr[NEWC_HDR_SIZE + 1];
	size_t namesize = strlen(name) + 1;

	if (size > UINT32_MAX || namesize > 4096) {
		if (!c->error)
			c->error = -EINVAL;
		return;
	}
	snprintf(hdr, sizeof(hdr),
		 "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 c->next_ino++, (unsigned int)mode, 0u, 0u,
		 S_ISDIR(mode) ? 2u : 1u, 0u, (unsigned int)size, 0u, 0u,
		 rdev_major, rdev_minor, (unsigned int)namesize, 0u);
	append(c, hdr, NEWC_HDR_SIZE);
	append(c, name, namesize);
	pad4(c);
	if (size)
		append(c, data, size);
	pad4(c);
}

void cpio_add_dir(struct cpio *c, const char *name)
{
	cpio_add(c, name, S_IFDIR | 0755, NULL, 0, 0, 0);
}

void cpio_add_file(struct cpio *c, const char *name, mode_t perm,
		   const void *data, size_t size)
{
	cpio_add(c, name, S_IFREG | (perm & 07777), data, size, 0, 0);
}

int cpio_finish(struct cpio *c)
{
	cpio_add(c, "TRAILER!!!", 0, NULL, 0, 0, 0);
	return c->error;
}

void cpio_release(struct cpio *c)
{
	free(c->buf);
	*c = (struct cpio){ 0 };
}
