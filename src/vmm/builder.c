// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The VM builder: the one place that knows every subsystem a VM is made of
 * and the order they are assembled, started, stopped and torn down in; the
 * public hvm_vm_* lifecycle is here. vm.c and vcpu.c are the machinery it
 * drives and name no subsystem: what vCPU threads must call into (the
 * scheduling brain) reaches them through the vm_hooks table filled below.
 *
 * Assembly (hvm_vm_create):
 *   vm_check_config, vm_alloc       config copy, no KVM yet
 *   builder_core_sched              --core-sched: the caller's cookie,
 *                                   inherited by every thread below
 *   console_out_create              guest output buffer and its thread
 *   vm_open_kvm                     /dev/kvm, host checks, KVM_CREATE_VM
 *   sched_vm_create                 exit policy: fixed before vCPUs exist
 *   arch_vm_init                    irqchip, memory, kernel loading
 *   platform_place                  every device, on the arch's slots:
 *                                   platform devices, then virtio on the
 *                                   PCI host or on virtio-mmio windows
 *   vm_create_vcpus                 KVM_CREATE_VCPU + arch_vcpu_init each
 *   arch_vm_finalize                tables (MP/ACPI, FDT), GIC init
 *   vm_register_coalesced           regions devices marked coalesced
 * Start (hvm_vm_start): console, control socket, sched thread, vCPUs.
 * Stop (hvm_vm_wait): vCPUs joined, console output flushed (bounded),
 * control, console, final statistics.
 * Tear-down (hvm_vm_destroy): vCPUs, virtio (its I/O may point into guest
 * RAM), sched, arch, console output, then the machinery.
 *
 * A new subsystem adds its calls here, and a hook in struct vm_hooks if
 * vCPU threads must reach it; vm.c and vcpu.c do not change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/agent_proto.h"
#include "agent/agent_host.h"
#include "agent/agent_stdio.h"
#include "base/log.h"
#include "control/control.h"
#include "core/arch.h"
#include "core/console.h"
#include "core/console_out.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "devices/virtio/virtio_vm.h"
#include "devices/virtio/virtio_vsock.h"
#include "sandbox/core_sched.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"
#include "sched/brain.h"
#include "sched/sched_config.h"
#include "sched/stats_report.h"
#include "vmm/platform.h"
#include "vmm/snapshot.h"
#include "vmm/vm_user.h"

static const struct vm_hooks builder_hooks = {
	.vcpu_thread_start = sched_vcpu_start,
	.vcpu_thread_exit = sched_vcpu_exit,
	.msi_injected = sched_msi_injected,
	.set_option = sched_set_option,
	.describe = sched_describe,
	.format_stats = sched_format_stats,
	.stat = sched_stat,
	.snapshot = snapshot_save_fds,
	.resuming = snapshot_resuming,
};

/*
 * Each VM logs at its own level and has its own sandbox setting: set both
 * on the calling thread for the length of an hvm_vm_* call (threads the VM
 * starts inherit them, base/log.h), then give the caller its own back.
 */
struct caller_state {
	enum log_level level;
	bool sandbox;
	const struct vm_identity *identity;
};

static struct caller_state enter_vm(const struct vm *vm)
{
	struct caller_state caller = { log_get_level(), sandbox_requested(),
				       identity_requested() };

	log_set_level(log_level_for_verbosity(vm->cfg->verbosity));
	sandbox_set_requested(vm->cfg->sandbox);
	identity_set_requested(&vm->identity);
	return caller;
}

static void leave_vm(struct caller_state caller)
{
	log_set_level(caller.level);
	sandbox_set_requested(caller.sandbox);
	identity_set_requested(caller.identity);
}

static void builder_teardown(struct vm *vm)
{
	/* A start that failed half-way leaves the socket registered. */
	control_stop(vm->control);
	vm->control = NULL;
	vm_destroy_vcpus(vm);
	virtio_vm_destroy(vm); /* its I/O may point into guest RAM */
	agent_host_destroy(vm); /* after the vsock device: no more reports */
	agent_stdio_destroy(vm); /* likewise: the rest of stdout, then EOF */
	sched_vm_destroy(vm);
	platform_destroy(vm); /* after virtio: the PCI host outlives it */
	arch_vm_destroy(vm);
	console_out_destroy(vm->console_out); /* after every device */
	vm->console_out = NULL;
	identity_release(&vm->identity);
	vm_free(vm);
}

static int builder_assemble(struct vm *vm);
static int builder_assemble_or_restore(struct vm *vm);

struct hvm_vm *hvm_vm_create(const struct hvm_config *cfg)
{
	struct caller_state caller;
	struct vm *vm;

	if (!cfg) {
		hvm_set_error(-EINVAL, "hvm_vm_create: no config");
		return NULL;
	}
	/* --template: a clone restored from the template's snapshot, which
	 * comes back here with restore set (docs/template.md). */
	if (cfg->template_key)
		return hvm_template_restore(cfg, cfg->template_dir,
					    cfg->template_key);
	if (vm_check_config(cfg) < 0)
		return NULL;
	vm = vm_alloc(cfg, &builder_hooks);
	if (!vm)
		return NULL;
	/* --sandbox auto (hintvm run's default): on where the kernel can. */
	if (vm->cfg->sandbox && vm->cfg->sandbox_if_supported &&
	    !sandbox_supported()) {
		pr_warn("%s; running without the sandbox", hvm_error_message());
		vm->cfg->sandbox = false;
	}
	/* Before the first thread of the VM exists (the console drain). */
	if (vm_user_choose(vm->cfg, &vm->identity) < 0) {
		vm_free(vm);
		return NULL;
	}
	caller = enter_vm(vm);
	if ((vm->cfg->sandbox && sandbox_prepare() < 0) ||
	    builder_assemble_or_restore(vm) < 0) {
		builder_teardown(vm);
		vm = NULL;
	}
	leave_vm(caller);
	return (struct hvm_vm *)vm;
}

/*
 * --restore DIR: the snapshot's files are checked and its machine options
 * set before KVM is opened; the VM is assembled around its memory file
 * (which vm_free closes), then the saved state is loaded into it.
 */
static int builder_assemble_or_restore(struct vm *vm)
{
	struct snapshot_restore rs;
	int r;

	if (!vm->cfg->restore)
		return builder_assemble(vm);
	r = snapshot_restore_open(vm->cfg, &rs);
	if (r < 0)
		return r;
	vm->restore_mem_fd = rs.mem_fd;
	rs.mem_fd = -1;
	r = builder_assemble(vm);
	if (r == 0)
		r = snapshot_restore_load(vm, &rs);
	snapshot_restore_release(&rs);
	return r;
}

/*
 * --core-sched vm|vcpu: the calling thread takes a new cookie before the
 * VM's first thread exists (console_out's drain), so every thread of the
 * VM inherits it; this thread is the VM's too (it waits for the VM and
 * tears it down). Refused where the kernel or the machine cannot: a VM
 * that asked for it never runs without it. With off, a thread an earlier
 * VM left its cookie on gets a fresh one rather than share it.
 */
static int builder_core_sched(struct vm *vm)
{
	int r;

	if (vm->cfg->core_sched == HVM_CORE_SCHED_OFF)
		return core_sched_leave_earlier();
	r = core_sched_create(config_core_sched_name(vm->cfg->core_sched));
	if (r < 0)
		return r;
	r = core_sched_get(0, &vm->core_cookie);
	if (r < 0)
		return hvm_set_error(r, "--core-sched: PR_SCHED_CORE_GET: %s",
				     strerror(-r));
	return 0;
}

static int builder_assemble(struct vm *vm)
{
	int r;

	r = builder_core_sched(vm);
	if (r < 0)
		return r;
	vm->console_out = console_out_create(vm->cfg->console == CONSOLE_NONE
						     ? -1
						     : vm->cfg->console_out_fd);
	if (!vm->console_out)
		return -ENOMEM; /* the reason is in hvm_error_message() */
	/* --agent: its initramfs, vsock device and command line first. */
	r = agent_host_prepare(vm);
	if (r == 0)
		r = vm_open_kvm(vm);
	/* Exit policy must be fixed before vCPUs exist (src/sched). */
	if (r == 0)
		r = sched_vm_create(vm);
	if (r == 0)
		r = arch_vm_init(vm);
	if (r == 0)
		r = platform_place(vm);
	/* The agent reports the main process's exit on a host port. */
	if (r == 0 && vm->agent)
		r = virtio_vsock_add_host_listener(virtio_vm_vsock(vm),
						   AGENT_STATUS_PORT,
						   agent_host_on_connect, vm);
	/* And the main process's stdio, when the embedder asked. */
	for (int i = 0; r == 0 && vm->agent_stdio && i < AGENT_STDIO_STREAMS;
	     i++)
		r = virtio_vsock_add_host_listener(
			virtio_vm_vsock(vm), agent_stdio_port[i],
			agent_stdio_on_connect[i], vm->agent_stdio);
	if (r == 0)
		r = vm_create_vcpus(vm);
	if (r == 0)
		r = arch_vm_finalize(vm);
	if (r == 0)
		r = vm_register_coalesced(vm);
	if (r == 0)
		boot_trace_mark(&vm->boot, BOOT_VM_CREATED);
	return r;
}

static size_t console_deliver_nothing(void *ctx, const uint8_t *buf, size_t len)
{
	return len;
}

static void console_quit(void *ctx)
{
	struct vm *vm = ctx;

	vm_request_stop(vm, HVM_EXIT_STOPPED, 0, -1,
			"stopped from the console (Ctrl-A x)");
}

static int builder_start(struct vm *vm);

int hvm_vm_start(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;
	struct caller_state caller;
	int r;

	if (!vm || vm->started)
		return hvm_set_error(-EINVAL, "the VM is already started");
	caller = enter_vm(vm);
	r = builder_start(vm);
	leave_vm(caller);
	return r;
}

/*
 * What the caller's thread still does to files once confined (Landlock,
 * docs/sandbox.md): at teardown it unlinks the control socket, its
 * registry link and the vsock hybrid socket, and writes --stats-json.
 * A grant that fails (a directory gone) only costs that file's cleanup.
 */
static void grant_teardown(struct vm *vm)
{
	const struct hvm_config *cfg = vm->cfg;

	if (vm->control)
		control_grant_teardown(vm->control);
	if (cfg->vsock.uds)
		sandbox_grant_parent(cfg->vsock.uds, SANDBOX_GRANT_REMOVE);
	if (cfg->sched && cfg->sched->stats_json[0] &&
	    sandbox_grant_path(cfg->sched->stats_json, SANDBOX_GRANT_CREATE) <
		    0)
		/* Not there yet: created at exit, in its directory. */
		sandbox_grant_parent(cfg->sched->stats_json,
				     SANDBOX_GRANT_CREATE);
}
static int builder_start(struct vm *vm)
{
	struct console_sink sink;
	int r;

	r = vm_kick_signal_setup();
	if (r < 0)
		return r;
	/* The threads started below inherit this thread's cookie. */
	if (vm->cfg->core_sched != HVM_CORE_SCHED_OFF) {
		uint64_t cookie = 0;

		if (core_sched_get(0, &cookie) < 0 || cookie != vm->core_cookie)
			return hvm_set_error(
				-EINVAL,
				"--core-sched: hvm_vm_start() must run on the thread that called hvm_vm_create(), which holds the VM's cookie");
	}
	sink = vm->console_sink;
	if (!sink.deliver)
		sink.deliver = console_deliver_nothing;
	sink.quit = console_quit;
	sink.quit_ctx = vm;
	if (vm->cfg->console != CONSOLE_NONE && vm->cfg->console_in_fd >= 0) {
		vm->console = console_start(vm->cfg->console_in_fd, sink,
					    &vm->console_in);
		if (!vm->console)
			return hvm_set_error(-ENOMEM,
					     "cannot start the console thread");
	}

	/* Named and registered before the guest runs (docs/control-socket.md). */
	r = control_start(vm, &vm->control);
	if (r < 0) {
		console_stop(vm->console);
		vm->console = NULL;
		return r;
	}

	/* Before the vCPUs run: vCPU ioctls (stats fds) wait for KVM_RUN. */
	r = sched_vm_start(vm);
	if (r < 0)
		pr_warn("%s; running without scheduling management",
			hvm_error_message());
	/*
	 * Everything that takes root is done: this thread becomes the VM's
	 * user (--user) before any guest code runs (its threads did at their
	 * start). A VM whose threads stayed root must not run. Its Landlock
	 * grants first: opening their directories may need who we were.
	 */
	if (sandbox_requested())
		grant_teardown(vm);
	r = sandbox_become_vm_user();
	if (r == 0)
		r = vm_start_vcpus(vm);
	/* After the vCPUs: the guest's first instruction waits for nothing. */
	if (r == 0 && control_serve(vm->control) < 0)
		pr_warn("%s; the control socket will not answer",
			hvm_error_message());
	/*
	 * Last, the caller's thread (which waits for the VM, prints the
	 * statistics and tears it down): only with the sandbox asked for,
	 * never an embedder's thread on the library's own initiative.
	 */
	if (r == 0)
		sandbox_thread_enter(SANDBOX_MAIN);
	return r;
}

int hvm_vm_wait(struct hvm_vm *handle, struct hvm_exit *exit)
{
	struct vm *vm = (struct vm *)handle;
	struct hvm_exit ended;
	struct caller_state caller;

	if (!vm || !vm->started)
		return hvm_set_error(-EINVAL, "the VM was never started");
	caller = enter_vm(vm);
	vm_wait_vcpus(vm, &ended);
	/* Powered off after the agent's report: the main process's status. */
	if (ended.reason == HVM_EXIT_POWEROFF &&
	    agent_host_status(vm, &ended.guest_status)) {
		ended.guest_reported = 1;
		ended.guest_oom_kills = agent_host_oom_kills(vm);
		snprintf(ended.detail, sizeof(ended.detail),
			 "the guest agent's main process ended with status %d",
			 ended.guest_status);
	}
	if (exit)
		*exit = ended;
	/* What the guest printed last reaches the reader, if it reads. */
	console_out_flush(vm->console_out, 250);
	/* Subscribers hear how it ended before the socket goes away. */
	event_post(&vm->events, VM_EVENT_EXIT, -1,
		   (uint64_t)hvm_exit_status(&ended),
		   hvm_exit_reason_name(ended.reason), ended.detail);
	control_stop(vm->control);
	vm->control = NULL;
	console_stop(vm->console);
	vm->console = NULL;
	boot_trace_mark(&vm->boot, BOOT_REPORT);
	sched_vm_stopped(vm); /* --stats, --stats-json */
	leave_vm(caller);
	return 0;
}

int hvm_vm_snapshot(struct hvm_vm *handle, const char *dir, int stay_paused)
{
	struct vm *vm = (struct vm *)handle;
	struct caller_state caller;
	int state_fd, mem_fd, r;

	if (!vm || !dir)
		return hvm_set_error(-EINVAL,
				     "hvm_vm_snapshot: no VM or directory");
	caller = enter_vm(vm);
	r = snapshot_open_dir(dir, &state_fd, &mem_fd);
	if (r == 0) {
		r = snapshot_save_fds(vm, state_fd, mem_fd, stay_paused);
		close(state_fd);
		close(mem_fd);
	}
	leave_vm(caller);
	return r;
}

struct hvm_vm *hvm_vm_restore(const struct hvm_config *cfg, const char *dir)
{
	struct hvm_config *copy;
	struct hvm_vm *vm;

	if (!cfg || !dir) {
		hvm_set_error(-EINVAL,
			      "hvm_vm_restore: no config or directory");
		return NULL;
	}
	copy = config_dup(cfg);
	if (!copy || hvm_config_set(copy, "restore", dir) < 0) {
		if (!copy)
			hvm_set_error(-ENOMEM, "out of memory");
		hvm_config_free(copy);
		return NULL;
	}
	vm = hvm_vm_create(copy);
	hvm_config_free(copy);
	return vm;
}

int hvm_vm_pause(struct hvm_vm *vm)
{
	return vm ? vm_pause((struct vm *)vm) : -EINVAL;
}

int hvm_vm_resume(struct hvm_vm *vm)
{
	return vm ? vm_resume((struct vm *)vm) : -EINVAL;
}

int hvm_vm_become_user(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;
	const struct vm_identity *caller;
	int r;

	if (!vm)
		return -EINVAL;
	caller = identity_requested();
	identity_set_requested(&vm->identity);
	r = identity_thread_enter();
	identity_set_requested(caller);
	return r;
}

int hvm_vm_vsock_connect(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;
	struct virtio_device *vsock = vm ? virtio_vm_vsock(vm) : NULL;

	if (!vsock)
		return hvm_set_error(-ENODEV, "the VM has no vsock device");
	return virtio_vsock_connect(vsock);
}

void hvm_vm_stop(struct hvm_vm *handle)
{
	if (handle)
		vm_stop_async((struct vm *)handle);
}

void hvm_vm_destroy(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;
	struct caller_state caller;
	double joined_ms;
	bool report;

	if (!vm)
		return;
	if (vm->started) {
		hvm_vm_stop(handle);
		hvm_vm_wait(handle, NULL);
	}
	/* The last boot phase: closing the VM fd is where KVM tears down. */
	report = vm->started && vm->cfg->sched && vm->cfg->sched->stats;
	joined_ms = boot_trace_ms(&vm->boot, BOOT_REPORT);
	caller = enter_vm(vm);
	builder_teardown(vm);
	leave_vm(caller);
	if (report) {
		struct boot_trace done = { 0 };
		double ms;

		boot_trace_mark(&done, BOOT_TORN_DOWN);
		ms = boot_trace_ms(&done, BOOT_TORN_DOWN);
		fprintf(stderr,
			"  boot: torn down %.2f ms after process start (teardown %.2f ms)\n",
			ms, joined_ms >= 0 ? ms - joined_ms : 0);
	}
}
