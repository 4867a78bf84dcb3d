/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `hintvm run --agent` inside libhintvm (agent_host.c): what the builder
 * calls to prepare a VM for the guest agent and to learn the status the
 * agent reported for the main process (docs/agent.md).
 */
#ifndef HVM_AGENT_AGENT_HOST_H
#define HVM_AGENT_AGENT_HOST_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

/*
 * Exit-report connections pending at once (docs/agent.md). The agent
 * opens one; a few more let a report through while a hostile guest's
 * silent connections wait for their deadline, and the bound keeps the
 * fds a guest makes this process hold small.
 */
#define AGENT_REPORT_MAX_PENDING 8

/*
 * Before assembly: with --agent, find (or build) the initramfs for
 * --kernel into cfg->agent_initrd and give the VM a vsock device (CID 3
 * and a socket in the runtime directory unless --vsock says otherwise);
 * in every case append --init-args to the command line.
 */
int agent_host_prepare(struct vm *vm);

/*
 * The exit-report server alone (agent_host_prepare starts it; unit tests
 * drive it without a VM): its thread, started now, so before the sandbox
 * closes.
 */
int agent_host_start(struct vm *vm);

/*
 * The vsock device's listener for AGENT_STATUS_PORT (OPAQUE: the vm): never blocks; a
 * connection over the bound of pending ones is closed at once and counted
 * in vm->agent_reports_refused.
 */
void agent_host_on_connect(int fd, void *opaque);

/* The main process's status as a shell says it, once reported. */
bool agent_host_status(struct vm *vm, int *status);
/*
 * The OOM kills the guest counted in the main process's cgroup by the
 * time it exited, sent with its status (hintvm-oci-init's task cgroup);
 * HVM_GUEST_STAT_UNKNOWN before a report or when the report had none.
 */
uint64_t agent_host_oom_kills(struct vm *vm);

void agent_host_destroy(struct vm *vm);

#endif
