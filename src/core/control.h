/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket of a running VM (`--control PATH`): a Unix stream
 * socket that answers one-line text requests with one-line JSON, so a shell
 * (`hintvm ctl PATH status`) or an orchestration tool can query and steer
 * the VM. Protocol in docs/control-socket.md.
 */
#ifndef HVM_CORE_CONTROL_H
#define HVM_CORE_CONTROL_H

#include <stddef.h>

struct vm;
struct control;

/* Bind PATH and serve it from a thread of its own. */
int control_start(struct vm *vm, const char *path, struct control **out);
void control_stop(struct control *ctl);

/*
 * Answer one request line (without the newline) into REPLY; exposed for
 * unit tests. Returns 0, or -1 when the line was not a valid request (the
 * reply then carries the error).
 */
int control_handle(struct vm *vm, const char *request, char *reply, size_t len);

#endif
