/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket of a running VM: a Unix stream socket, registered
 * under the VM's name in the runtime directory (control/registry.h) unless
 * `--control none`, that speaks protocol v1 (abi/control_proto.h,
 * docs/control-socket.md) so that `hintvm ctl`, `ls`, `top` and
 * orchestration tools can query and steer the VM and subscribe to its
 * events. One thread serves every client and subscriber; it never blocks
 * on one (non-blocking sockets, bounded buffers), and the VM's threads
 * never wait for it.
 */
#ifndef HVM_CONTROL_CONTROL_H
#define HVM_CONTROL_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct control;

/*
 * Name the VM (cfg->name or a generated one), bind its socket (cfg->
 * control_path, or NAME.sock in the runtime directory; none with
 * cfg->control_none) and register it; control_serve() then starts the
 * thread that serves it and hvm_vm_event_fd() subscribers. A runtime
 * directory that cannot be used is an error only when the user named
 * the VM.
 */
int control_start(struct vm *vm, struct control **out);

/*
 * Start the control thread. Separate from control_start() so that the
 * guest's first instruction does not wait for a thread to be created:
 * connections made before it runs wait in the listen backlog.
 */
int control_serve(struct control *ctl);

/* Deliver what subscribers are owed, close every client, unregister. */
void control_stop(struct control *ctl);
/*
 * On the thread that will call control_stop() under the sandbox, before
 * it confines itself: the grants it needs to unlink the socket and its
 * registry link (sandbox/landlock.h).
 */
void control_grant_teardown(const struct control *ctl);

/* A new subscriber's end of a socket pair (hvm_vm_event_fd). */
int control_event_fd(struct control *ctl);

/*
 * Answer one request line of LEN bytes: the reply line (malloc'ed, with
 * '\n', *REPLY_LEN bytes), or NULL on ENOMEM. *SUBSCRIBE is set when the
 * line was a valid `events` request the caller must now serve. Runs on
 * the control thread; exposed for tests.
 */
/*
 * What the public API (vmm/api.c) asks of the control plane, so that a
 * library caller and a socket client get the same answers: change run-time
 * setting KEY (0 or -errno, reason recorded), the effective configuration
 * as JSON (snprintf-like), and the statistics through the VM's hooks.
 */
int control_set(struct vm *vm, const char *key, const char *value);
int control_info(struct vm *vm, char *buf, size_t len);
int control_stats(struct vm *vm, bool json, char *buf, size_t len);
int control_stat(struct vm *vm, const char *name, uint64_t *value);

char *control_answer(struct control *ctl, const char *line, size_t len,
		     size_t *reply_len, int *subscribe);

#endif
