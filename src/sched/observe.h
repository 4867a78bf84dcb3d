/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the host tells us about CPU contention, from local data only (the
 * seed review rejected global load averages: machines are carved up into
 * cgroups and cpusets, so only what *this* process may use matters):
 *
 *   - the CPUs this process may run on: sched_getaffinity() intersected
 *     with the cgroup cpuset (v1 cpuset.effective_cpus or v2
 *     cpuset.cpus.effective) when there is one;
 *   - per thread: run time and run-queue wait, /proc/self/task/TID/schedstat;
 *   - /proc/pressure/cpu: the share of time some task waited for a CPU;
 *   - cgroup cpu.stat: CFS bandwidth throttling (v1 cpu controller or v2).
 *
 * Every parser takes file contents as a string so tests can feed synthetic
 * and malformed files; the observe_read_* wrappers read the real ones.
 * Parsers return 0 or -EINVAL and never read past the terminating NUL.
 */
#ifndef HVM_SCHED_OBSERVE_H
#define HVM_SCHED_OBSERVE_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/.../schedstat: "run_ns wait_ns timeslices". */
struct thread_sched {
	uint64_t run_ns; /* time on a CPU */
	uint64_t wait_ns; /* time runnable but waiting on a run queue */
	uint64_t timeslices;
};

/* /proc/pressure/cpu, "some" line (the "full" line is ignored for CPU). */
struct cpu_pressure {
	uint32_t avg10_centi; /* avg10 in hundredths of a percent */
	uint32_t avg60_centi;
	uint64_t total_us; /* cumulative stall time */
};

/* cgroup cpu.stat, normalised across v1 and v2. */
struct cgroup_cpu_stat {
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_ns; /* v1 throttled_time, v2 throttled_usec*1000 */
};

int observe_parse_schedstat(const char *text, struct thread_sched *out);
int observe_parse_pressure(const char *text, struct cpu_pressure *out);
int observe_parse_cpu_stat(const char *text, struct cgroup_cpu_stat *out);

/* A CPU list such as "0-3,8,10-11\n" (empty means no CPUs) into SET. */
int observe_parse_cpulist(const char *text, cpu_set_t *set);

/* Format SET as a CPU list ("0-3,8") into BUF; returns BUF. */
char *observe_format_cpulist(const cpu_set_t *set, char *buf, size_t len);

/*
 * Locate the cgroup directory holding CONTROLLER's files ("cpu",
 * "cpuset") for this process, from the contents of /proc/self/cgroup and
 * /proc/self/mountinfo: a v1 hierarchy carrying that controller, else the
 * v2 unified hierarchy. The result is the mount point joined with the
 * process's path relative to the mount's root. Returns 0, -ENOENT when
 * neither hierarchy has the controller, -EINVAL, -ENAMETOOLONG.
 */
int observe_find_cgroup_dir(const char *proc_cgroup, const char *mountinfo,
			    const char *controller, char *dir, size_t len,
			    bool *is_v2);

/* ---- wrappers that read the live files ---- */

int observe_read_thread(pid_t tid, struct thread_sched *out);
int observe_read_pressure(struct cpu_pressure *out); /* -ENOENT: no PSI */
int observe_read_cpu_stat(struct cgroup_cpu_stat *out); /* -ENOENT: none */

/*
 * The CPUs this process may use: affinity intersected with the cgroup
 * cpuset (if any). Returns the number of CPUs, or -errno.
 */
int observe_allowed_cpus(cpu_set_t *set);

#endif
