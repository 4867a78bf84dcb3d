// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Task.Stats' message: the guest's own cgroup numbers for the task (the cgroup
 * hintvm-oci-init puts the container's processes in, read by the guest
 * agent: hvm_guest_stats()), as containerd's cgroups v1 Metrics, the type
 * containerd 1.6's `ctr task metrics` and the CRI decode from a runc-style
 * shim: memory.usage/limit, cpu usage total/user/kernel, pids
 * current/limit, memory_oom_control.oom_kill. A number the guest could
 * not read is left out (zero on the wire). The handler is task.c's.
 *
 * A pod's sandbox is the VM itself: its Stats are the VMM process's own
 * cost on the host (CPU time, resident memory with the guest RAM it has
 * touched, threads), the overhead the pod's containers' numbers leave
 * out (shim_stats_vmm).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroups_v1_metrics.pb-c.h"
#include "hintvm/hintvm.h"
#include "shim/shim.h"
#include "task_shim.pb-c.h"

static uint64_t known(uint64_t v)
{
	return v == HVM_GUEST_STAT_UNKNOWN ? 0 : v;
}

int shim_stats_encode(const struct hvm_guest_stats *g,
		      Google__Protobuf__Any *any)
{
	Io__Containerd__Cgroups__V1__Metrics m =
		IO__CONTAINERD__CGROUPS__V1__METRICS__INIT;
	Io__Containerd__Cgroups__V1__PidsStat pids =
		IO__CONTAINERD__CGROUPS__V1__PIDS_STAT__INIT;
	Io__Containerd__Cgroups__V1__CPUStat cpu =
		IO__CONTAINERD__CGROUPS__V1__CPUSTAT__INIT;
	Io__Containerd__Cgroups__V1__CPUUsage usage =
		IO__CONTAINERD__CGROUPS__V1__CPUUSAGE__INIT;
	Io__Containerd__Cgroups__V1__MemoryStat mem =
		IO__CONTAINERD__CGROUPS__V1__MEMORY_STAT__INIT;
	Io__Containerd__Cgroups__V1__MemoryEntry mem_usage =
		IO__CONTAINERD__CGROUPS__V1__MEMORY_ENTRY__INIT;
	Io__Containerd__Cgroups__V1__MemoryOomControl oom =
		IO__CONTAINERD__CGROUPS__V1__MEMORY_OOM_CONTROL__INIT;
	uint8_t *buf;
	size_t len;

	usage.total = known(g->cpu_usage_ns);
	usage.user = known(g->cpu_user_ns);
	usage.kernel = known(g->cpu_system_ns);
	cpu.usage = &usage;
	m.cpu = &cpu;
	/* ctr prints memory.usage whenever memory is there: always send it. */
	mem_usage.usage = known(g->memory_usage);
	mem_usage.limit = known(g->memory_limit);
	mem.usage = &mem_usage;
	m.memory = &mem;
	if (g->pids_current != HVM_GUEST_STAT_UNKNOWN) {
		pids.current = g->pids_current;
		pids.limit = known(g->pids_limit);
		m.pids = &pids;
	}
	if (g->oom_kills != HVM_GUEST_STAT_UNKNOWN) {
		oom.oom_kill = g->oom_kills;
		m.memory_oom_control = &oom;
	}
	len = io__containerd__cgroups__v1__metrics__get_packed_size(&m);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	io__containerd__cgroups__v1__metrics__pack(&m, buf);
	google__protobuf__any__init(any);
	/* containerd's typeurl: the message's full name, no host part. */
	any->type_url =
		(char *)io__containerd__cgroups__v1__metrics__descriptor.name;
	any->value.data = buf;
	any->value.len = len;
	return 0;
}

void shim_stats_send(struct ttrpc_server *server,
		     const struct ttrpc_token *token, const char *what,
		     const struct hvm_guest_stats *g)
{
	Containerd__Task__V2__StatsResponse resp =
		CONTAINERD__TASK__V2__STATS_RESPONSE__INIT;
	Google__Protobuf__Any any;

	if (shim_stats_encode(g, &any)) {
		ttrpc_server_error(server, token,
				   GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				   "%s: out of memory", what);
		return;
	}
	resp.stats = &any;
	ttrpc_server_reply(server, token, &resp.base);
	free(any.value.data);
}

int shim_stats_parse_proc_stat(const char *text, long ticks, long page_size,
			       struct hvm_guest_stats *g)
{
	unsigned long long v[22];
	const char *p = text ? strrchr(text, ')') : NULL;
	char *end;

	/* Fields after the command's ")" (which may hold spaces and ")"):
	 * state, then numbers; utime is the 12th, stime the 13th,
	 * num_threads the 18th, rss (pages) the 22nd (proc(5)). */
	if (!p || ticks <= 0 || page_size <= 0)
		return -EINVAL;
	p++;
	while (*p == ' ')
		p++;
	if (!*p || *p == ' ')
		return -EINVAL;
	p++; /* the state letter */
	for (int i = 1; i < 22; i++) {
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
	}
	memset(g, 0xff, sizeof(*g)); /* HVM_GUEST_STAT_UNKNOWN each */
	g->cpu_user_ns = v[11] * (1000000000ull / (unsigned long long)ticks);
	g->cpu_system_ns = v[12] * (1000000000ull / (unsigned long long)ticks);
	g->cpu_usage_ns = g->cpu_user_ns + g->cpu_system_ns;
	g->pids_current = v[17];
	g->memory_usage = v[21] * (unsigned long long)page_size;
	return 0;
}

int shim_stats_vmm(pid_t pid, struct hvm_guest_stats *g)
{
	char path[64], text[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	text[n] = 0;
	return shim_stats_parse_proc_stat(text, sysconf(_SC_CLK_TCK),
					  sysconf(_SC_PAGESIZE), g);
}
