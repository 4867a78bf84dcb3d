/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Confining a process between fork and exec (struct agent_limits): the
 * guest agent's EXEC and hintvm-runtime's oci-init both call these three
 * steps around their uid/gid switch, in runc's order:
 *
 *   limits_before_user()  rlimits; no_new_privs; the seccomp program when
 *                         no_new_privs is off (loading it needs
 *                         CAP_SYS_ADMIN, gone after the switch); the
 *                         bounding set; PR_SET_KEEPCAPS
 *   (setgroups, setgid, setuid)
 *   limits_after_user()   PR_SET_KEEPCAPS off; effective, permitted and
 *                         inheritable with capset; the ambient set
 *   limits_last()         the seccomp program with no_new_privs, as late
 *                         as possible, so the fewest syscalls follow it
 *
 * Each returns 0 or a negative errno, with WHAT naming the step.
 */
#ifndef HVM_AGENT_LIMITS_H
#define HVM_AGENT_LIMITS_H

#include "abi/agent_proto.h"

int limits_before_user(const struct agent_limits *l, const char **what);
int limits_after_user(const struct agent_limits *l, const char **what);
int limits_last(const struct agent_limits *l, const char **what);

#endif
