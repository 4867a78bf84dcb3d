// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The VM generation ID's bytes: random, from the host's pool (a counter
 * would let a guest predict its next value, and the guest credits none
 * of it as entropy, but it must differ between clones).
 */
#include <errno.h>
#include <sys/random.h>

#include "base/log.h"
#include "core/guest_memory.h"
#include "devices/vmgenid.h"

int vmgenid_write(const struct guest_memory *mem, uint64_t gpa)
{
	uint8_t id[VMGENID_LEN];

	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return hvm_set_errno_error("VM generation ID: getrandom");
	if (guest_write(mem, gpa, id, sizeof(id)))
		return hvm_set_error(
			-EFAULT,
			"VM generation ID: guest range 0x%llx+%u is not RAM",
			(unsigned long long)gpa, VMGENID_LEN);
	return 0;
}
