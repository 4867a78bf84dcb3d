/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hintvm-runtime: runc's command line (as containerd's runc shim and
 * podman's conmon call it) on top of libhintvm. Each container is a VM;
 * the VMM process is the container's pid, and its exit status is the
 * container's. See docs/oci-runtime.md.
 */
#ifndef HVM_RUNTIME_RUNTIME_H
#define HVM_RUNTIME_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RT_DEFAULT_ROOT "/run/hintvm-runtime"
/* The runtime-spec version implemented (--version, features, spec). */
#define RT_OCI_VERSION "1.1.0"
#define RT_MAX_ID 128

/* The global options, shared by every command. */
struct rt_globals {
	const char *root; /* --root: one directory per container */
	const char *log_path; /* --log */
	bool log_json; /* --log-format json */
	bool debug; /* --debug */
	bool systemd_cgroup; /* --systemd-cgroup */
	const char *config_path; /* --config: the runtime configuration */
};

extern struct rt_globals rt;

/* ---- log.c: the runtime log (--log), as the shims read it ------------ */
enum rt_level { RT_DEBUG, RT_INFO, RT_WARN, RT_ERROR };

/* Append one entry to --log (text or JSON), and errors also to stderr. */
void rt_log(enum rt_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Now in RFC 3339 with nanoseconds (UTC), as runc writes times. */
void rt_format_time(char *buf, size_t len);
/*
 * Keep the log open from now on: the VMM process calls it before
 * hvm_vm_start(), after which its thread may no longer open the log by
 * its path (Landlock, docs/sandbox.md); O_APPEND, so lines still land
 * whole at the end among other writers'.
 */
void rt_log_keep_open(void);
#define rt_error(...) rt_log(RT_ERROR, __VA_ARGS__)
#define rt_warn(...) rt_log(RT_WARN, __VA_ARGS__)
#define rt_debug(...) rt_log(RT_DEBUG, __VA_ARGS__)

/* ---- commands ---------------------------------------------------------- */
int cmd_create(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_state(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_exec(int argc, char **argv);

struct rt_container;
struct oci_spec;
/*
 * A container in a clone of a VM template (docs/template.md): run SPEC's
 * process through the guest agent with root ROOT (the agent mounts the
 * container's rootfs share there), its limits and the seccomp program
 * create compiled, stdin, stdout and stderr this process's own; signals
 * read from SIG_FD as signalfd_siginfo records are forwarded to it.
 * Returns its exit status (128+N for signal N), or 255 when it could not
 * be started (reason logged).
 */
int rt_exec_main_process(const struct rt_container *c,
			 const struct oci_spec *spec, const char *root,
			 int sig_fd);
int cmd_features(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_spec(int argc, char **argv);

/* ---- spec_template.c: what `spec` writes (runc's example config.json) */
extern const char rt_spec_template[];

/* A signal by name ("KILL", "SIGTERM") or number; -1 when neither. */
int rt_parse_signal(const char *s);

#endif
