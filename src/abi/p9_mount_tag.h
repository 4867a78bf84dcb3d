/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount tag of a virtio-9p share: what the device's config space
 * carries (tag_len, then the tag without a NUL) and what the guest types
 * after `mount -t 9p`. One rule for the option parser and the device.
 */
#ifndef HVM_ABI_P9_MOUNT_TAG_H
#define HVM_ABI_P9_MOUNT_TAG_H

#include <stdbool.h>
#include <string.h>

#define P9_MOUNT_TAG_MAX 64 /* bytes, without a NUL */

/* A tag the guest can type on a shell line: 1-64 of [A-Za-z0-9_.-]. */
static inline bool p9_mount_tag_valid(const char *tag)
{
	size_t len = strlen(tag);

	return len && len <= P9_MOUNT_TAG_MAX &&
	       strspn(tag,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_.-") == len;
}

#endif
