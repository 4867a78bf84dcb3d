/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libhintvm: boot and supervise a KVM virtual machine from a C program.
 *
 * The API is string-keyed on purpose: every option the `hintvm run` command
 * line accepts is a key here (without the leading "--"), validated by the
 * same code, so an orchestration tool, a config file and the command line
 * cannot disagree about what a value means.
 *
 *	struct hvm_config *cfg = hvm_config_new();
 *	hvm_config_set(cfg, "cpus", "2");
 *	struct hvm_vm *vm = hvm_vm_create(cfg);
 *	hvm_vm_start(vm);
 *	struct hvm_exit exit;
 *	hvm_vm_wait(vm, &exit);
 *	hvm_vm_destroy(vm);
 *	hvm_config_free(cfg);
 *
 * Functions that can fail return NULL or a negative errno value and leave a
 * one-line, human-readable explanation in hvm_last_error() (per thread).
 */
#ifndef HINTVM_H
#define HINTVM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HVM_API __attribute__((visibility("default")))

struct hvm_config;
struct hvm_vm;

/* The library version, "MAJOR.MINOR.PATCH". */
HVM_API const char *hvm_version(void);

/* Explanation of the last failure in this thread; never NULL. */
HVM_API const char *hvm_last_error(void);

/* ---- configuration ---------------------------------------------------- */

HVM_API struct hvm_config *hvm_config_new(void);
HVM_API void hvm_config_free(struct hvm_config *cfg);

/*
 * Set option KEY (a long option name such as "mem" or "cpus") to VALUE.
 * Flags that take no value accept NULL, "on"/"off", "yes"/"no", "1"/"0".
 * Returns 0, or -EINVAL for an unknown key or a bad value.
 */
HVM_API int hvm_config_set(struct hvm_config *cfg, const char *key,
			   const char *value);

/*
 * Read "key = value" lines ('#' starts a comment) from PATH. Keys already
 * set by hvm_config_set() before this call win, so a command line parsed
 * first overrides the file. Errors name the file and line.
 */
HVM_API int hvm_config_load_file(struct hvm_config *cfg, const char *path);

/*
 * Guest console wiring for embedders: the serial port reads guest input
 * from IN_FD and writes guest output to OUT_FD (-1 for none). The file
 * descriptors stay owned by the caller. Default: stdin and stdout.
 */
HVM_API int hvm_config_set_console_fds(struct hvm_config *cfg, int in_fd,
				       int out_fd);

/* Description of one option, for help texts and option parsers. */
struct hvm_option_info {
	const char *name; /* long name, e.g. "mem" */
	char short_name; /* e.g. 'm', or 0 */
	const char *arg; /* argument placeholder, e.g. "SIZE"; NULL: flag */
	const char *help; /* one line */
};

/* All options, in help order; *count receives their number. */
HVM_API const struct hvm_option_info *hvm_options(size_t *count);

/* ---- virtual machine -------------------------------------------------- */

enum hvm_exit_reason {
	HVM_EXIT_POWEROFF, /* the guest powered off */
	HVM_EXIT_REBOOT, /* the guest asked for a reset */
	HVM_EXIT_DEBUG, /* the guest wrote the debug-exit port */
	HVM_EXIT_CRASH, /* triple fault, KVM internal or emulation error */
	HVM_EXIT_STOPPED, /* hvm_vm_stop() or a signal */
	HVM_EXIT_HOST_ERROR, /* hintvm itself failed while running */
};

struct hvm_exit {
	enum hvm_exit_reason reason;
	uint32_t debug_code; /* value written to the debug-exit port */
	int vcpu; /* vCPU that ended the VM, or -1 */
	char detail[160]; /* human-readable cause */
};

/*
 * Process exit statuses `hintvm run` uses; documented in README.md.
 * Debug-exit values map to (code << 1) | 1 as QEMU's isa-debug-exit does,
 * so every status hintvm itself picks is even.
 */
enum hvm_exit_status {
	HVM_STATUS_POWEROFF = 0,
	HVM_STATUS_USAGE = 2, /* bad option, file or host: guest never ran */
	HVM_STATUS_REBOOT = 4,
	HVM_STATUS_CRASH = 6,
	HVM_STATUS_HOST_ERROR = 8,
	HVM_STATUS_STOPPED = 10,
};

/* The process exit status for EXIT (see enum hvm_exit_status). */
HVM_API int hvm_exit_status(const struct hvm_exit *exit);

/* Human-readable name of REASON ("poweroff", "crash", ...). */
HVM_API const char *hvm_exit_reason_name(enum hvm_exit_reason reason);

/*
 * Build the VM described by CFG: opens /dev/kvm, checks capabilities,
 * allocates guest memory, loads the kernel and creates the vCPUs, but runs
 * nothing. On failure nothing is left behind and NULL is returned. CFG may
 * be freed afterwards.
 */
HVM_API struct hvm_vm *hvm_vm_create(const struct hvm_config *cfg);

/* Start the vCPU threads. */
HVM_API int hvm_vm_start(struct hvm_vm *vm);

/* Wait until the VM ends and describe why. */
HVM_API int hvm_vm_wait(struct hvm_vm *vm, struct hvm_exit *exit);

/*
 * Ask a running VM to stop (async-signal-safe: callable from a signal
 * handler). hvm_vm_wait() then reports HVM_EXIT_STOPPED.
 */
HVM_API void hvm_vm_stop(struct hvm_vm *vm);

/*
 * Take every vCPU out of KVM_RUN and keep it out (returns once all are
 * parked), or let them run again. Not async-signal-safe.
 */
HVM_API int hvm_vm_pause(struct hvm_vm *vm);
HVM_API int hvm_vm_resume(struct hvm_vm *vm);

/* Stop the VM if it runs and free everything it holds. */
HVM_API void hvm_vm_destroy(struct hvm_vm *vm);

/* ---- statistics (docs/sched.md) --------------------------------------- */

/*
 * The VM's exit, halt-poll and scheduling statistics as text: the
 * `--stats` table, or with JSON non-zero the `--stats-json` document.
 * Like snprintf: writes at most LEN bytes including the NUL and returns
 * the length the whole text needs (or a negative errno). Works while the
 * VM runs and after it ended, until hvm_vm_destroy().
 */
HVM_API int hvm_vm_stats(struct hvm_vm *vm, int json, char *buf, size_t len);

/*
 * One statistic by NAME: a per-vCPU name summed over all vCPUs ("exits",
 * "halt_successful_poll", "wait_ns", "hint_accepted", "hint_dropped", any
 * KVM vCPU statistic), "vcpuN.NAME" for one vCPU, or "vm.NAME"
 * ("vm.halt_poll_ns", "vm.commit", "vm.pv_enabled", any KVM VM
 * statistic; docs/sched.md lists them). Returns 0, or -ENOENT for an
 * unknown name.
 */
HVM_API int hvm_vm_stat(struct hvm_vm *vm, const char *name, uint64_t *value);

/* ---- names, the registry and the control socket ----------------------- */

/*
 * Every VM has a name (option "name", default "vm-PID") and, unless option
 * "control" is "none", a control socket registered under that name in the
 * runtime directory, so that `hintvm ctl NAME`, `hintvm ls` and other
 * programs find it. Protocol and directory: docs/control-socket.md.
 */

/* The VM's name. */
HVM_API const char *hvm_vm_name(struct hvm_vm *vm);

/*
 * Change a setting of a running VM: KEY is an option name that can change
 * at run time ("halt-poll", "pin", "sched-hints", "stats-interval"), VALUE
 * as on the command line. Returns 0; -ENOENT for a key no option has,
 * -EPERM for an option fixed once the VM exists, -EINVAL for a bad value.
 */
HVM_API int hvm_vm_set(struct hvm_vm *vm, const char *key, const char *value);

/*
 * The VM's effective configuration and identity (name, pid, state,
 * options as they are now) as one JSON object. Like snprintf: writes at
 * most LEN bytes including the NUL, returns the length the text needs.
 */
HVM_API int hvm_vm_info(struct hvm_vm *vm, char *buf, size_t len);

/*
 * Subscribe to the VM's events: returns a new file descriptor (close it
 * to unsubscribe) that becomes readable with one JSON object per line for
 * each event, as the control socket's "events" request delivers them. A
 * reader that falls behind loses the oldest events and is told how many;
 * it never slows the VM. Valid from hvm_vm_start() on; -EBUSY when too
 * many subscribers exist already.
 */
HVM_API int hvm_vm_event_fd(struct hvm_vm *vm);

/* The directory running VMs register in (not created). */
HVM_API int hvm_runtime_dir(char *buf, size_t len);

struct hvm_vm_entry {
	char name[65];
	char socket[108]; /* the registry entry: connect() to it */
};

/*
 * The VMs running on this host under this runtime directory, sorted by
 * name, as a malloc'ed array of *COUNT entries (free() it). Entries left
 * behind by VMs that died are removed on the way.
 */
HVM_API int hvm_list_vms(struct hvm_vm_entry **entries, size_t *count);

/*
 * Connect to the control socket of a running VM: NAME_OR_PATH is a VM
 * name or, when it contains a '/', a socket path. Returns the socket
 * (blocking, close-on-exec) or a negative errno.
 */
HVM_API int hvm_control_connect(const char *name_or_path);

#ifdef __cplusplus
}
#endif

#endif /* HINTVM_H */
