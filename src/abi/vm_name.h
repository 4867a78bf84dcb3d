/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a VM may be called: the name `hintvm ctl NAME`, `hintvm ls` and
 * other programs find it by, and its runtime-directory entry NAME.sock
 * (docs/control-socket.md). Checked where --name is parsed and again where
 * the registry claims the name.
 */
#ifndef HVM_ABI_VM_NAME_H
#define HVM_ABI_VM_NAME_H

/* Longest VM name; names are [A-Za-z0-9._-], not starting with . or -. */
#define VM_NAME_MAX 64

/* 0 when NAME is a valid VM name, else -EINVAL with the reason recorded. */
int vm_name_check(const char *name);

#endif
