/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The main process's stdin, stdout and stderr as vsock connections to
 * the embedder's fds (agent_stdio.c, hvm_config_set_agent_stdio_fds()).
 */
#ifndef HVM_AGENT_AGENT_STDIO_H
#define HVM_AGENT_AGENT_STDIO_H

#include <stdint.h>

struct vm;

/* stdin, stdout, stderr */
#define AGENT_STDIO_STREAMS 3

/*
 * Before the sandbox closes: the copier threads, when fds were given
 * (then vm->agent_stdio is set).
 */
int agent_stdio_start(struct vm *vm);

/*
 * What the builder serves on the vsock device: stream I's host port and
 * its listener (OPAQUE: vm->agent_stdio).
 */
extern const uint32_t agent_stdio_port[AGENT_STDIO_STREAMS];
extern void (*const agent_stdio_on_connect[AGENT_STDIO_STREAMS])(int fd,
								 void *opaque);

/* After the vsock device is gone: what it delivered, then stop. */
void agent_stdio_destroy(struct vm *vm);

#endif
