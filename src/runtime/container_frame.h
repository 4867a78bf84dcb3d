/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What console mode's guest init (guest-firmware/oci/oci-init.c) runs, in
 * the agent protocol's own encoding: a parsed config.json as one CONTAINER
 * frame (src/abi/agent_proto.h), the file /hintvm/container of the
 * container's initramfs. The host parses config.json once; the guest
 * parses no JSON.
 */
#ifndef HVM_RUNTIME_CONTAINER_FRAME_H
#define HVM_RUNTIME_CONTAINER_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "spec.h"

/*
 * SPEC's process and container, with linux.seccomp compiled to SECCOMP
 * (SECCOMP_LEN bytes; NULL: no profile), as a whole frame in *FRAME
 * (malloc'd, *LEN bytes). The frame is decoded again here with the guest's
 * own rules, so that what the guest init would refuse fails create, with
 * the reason. Returns 0, or a negative errno with the reason in ERR.
 */
int rt_container_frame(const struct oci_spec *spec, const void *seccomp,
		       size_t seccomp_len, uint8_t **frame, size_t *len,
		       char *err, size_t errlen);

#endif
