/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --user: who a VM's threads become after setup (sandbox/identity.h does
 * the switch). Chosen before the VM's first thread exists.
 */
#ifndef HVM_VMM_VM_USER_H
#define HVM_VMM_VM_USER_H

#include "sandbox/identity.h"

struct hvm_config;

/*
 * CFG's --user as an identity: UID[:GID] as given (root only, or one's
 * own), auto as a free uid of --user-range when root (its lock in ID),
 * nothing otherwise; or what vm_user_preset() left, once. 0 or -errno
 * (hvm_error_message()).
 */
int vm_user_choose(const struct hvm_config *cfg, struct vm_identity *id);

/*
 * --jail: the identity chosen before the jail was entered (where the
 * host's uid locks are), for the next vm_user_choose() in this process.
 */
void vm_user_preset(const struct vm_identity *id);

#endif
