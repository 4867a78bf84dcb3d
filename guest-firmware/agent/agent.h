/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hintvm-agent: the guest agent (docs/agent.md). One process, one thread,
 * one poll loop: the listening socket, every connection, every relay
 * between a connection and a process's pipe or terminal, and a signalfd
 * for SIGCHLD.
 */
#ifndef HVM_AGENT_H
#define HVM_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/agent_proto.h"

/* Where the agent listens and where it reports the main process's exit. */
struct agent_listen {
	/*
	 * Test mode: a Unix socket that speaks the host side of
	 * Firecracker's hybrid vsock ("CONNECT <port>\n" -> "OK <n>\n"),
	 * so host clients work against it unchanged; the exit report goes to
	 * the Unix socket "<path>_<AGENT_STATUS_PORT>", as a guest's
	 * connection to that host port would. NULL: AF_VSOCK.
	 */
	const char *hybrid_path;
	unsigned int port;
};

/* The process whose exit ends the agent (and, as PID 1, the VM). */
struct agent_main {
	char **argv; /* NULL: none; the agent serves until powered off */
	pid_t pid;
	bool exited;
	int status; /* wait status */
	/* Its stdio over the host's ports 1027-1029, or -1s (agent_serve). */
	int stdio[3];
};

/* Serve until the main process (if any) exits. Returns its wait status. */
int agent_serve(const struct agent_listen *listen, struct agent_main *main);

/* Report the main process's exit to the host (AGENT_MSG_EXIT_REPORT). */
int agent_report_exit(const struct agent_listen *listen, pid_t pid,
		      int wait_status);

/* PID 1 duties (pid1.c): everything before serving, and the end. */
struct agent_boot {
	char **main_argv; /* from the kernel: init's arguments after "--" */
	bool debug;
};
int agent_pid1_setup(struct agent_boot *boot);
/*
 * Mount each hintvm.share=TAG:DIR whose DIR holds ROOT (an EXEC's), once;
 * 0 or -errno of the mount.
 */
int agent_lazy_share_mount(const char *root);
void agent_pid1_poweroff(void) __attribute__((noreturn));
/* How many init arguments followed "--" on the kernel command line. */
int agent_cmdline_init_argc(void);

/*
 * The task's cgroup (task_cgroup.c): mount cgroup2 on MNT, make "task"
 * with the cpu, memory and pids controllers and move the caller into it.
 * Returns an open directory of it (close-on-exec) or -errno.
 */
int agent_task_cgroup_setup(const char *mnt);
/* Its numbers; what cannot be read is AGENT_STATS_UNKNOWN. */
void agent_task_cgroup_read(int dir, struct agent_stats *s);
/*
 * A pod container's cgroup NAME (EXEC's CGROUP), a sibling of the task's
 * (TASK_DIR): made when absent, its memory.max set to MEMORY_MAX when
 * not 0. Returns an open fd of its cgroup.procs for the new process to
 * write "0" to (close-on-exec), or -errno.
 */
int agent_ctr_cgroup_prepare(int task_dir, const char *name,
			     uint64_t memory_max);
/* Its directory, for agent_task_cgroup_read(); -ENOENT: never made. */
int agent_ctr_cgroup_open(int task_dir, const char *name);
/* CGROUP_SET: C's memory.max and cpu.max written. 0 or -errno. */
int agent_ctr_cgroup_set(int task_dir, const struct agent_cgroup_set *c);
/* The environment variable that hands the agent that directory's fd. */
#define AGENT_TASK_CGROUP_ENV "HINTVM_TASK_CGROUP_FD"

/*
 * A pod container's /dev under ROOT (pod_dev.c): a tmpfs with runc's
 * default nodes and links, devpts and shm. In the caller's own mount
 * namespace. 0 or -errno.
 */
int agent_pod_dev_setup(const char *root);

/* Network configuration over rtnetlink (net.c). */
int agent_net_up(const char *ifname);
/* "IF,ADDR/PREFIX[,gw=ADDR][,mtu=N]" as on the kernel command line. */
int agent_net_configure(const char *spec);

/* Log to the console (stderr) with the agent's prefix. */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool agent_debug;

#endif
