// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Task.Stats' encoder: the guest's numbers become the Any containerd
 * 1.6's `ctr task metrics` decodes (typeurl: the full name
 * io.containerd.cgroups.v1.Metrics), read back here with the same
 * generated decoder containerd's message matches field for field.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroups_v1_metrics.pb-c.h"
#include "hintvm/hintvm.h"
#include "shim/shim.h"

static Io__Containerd__Cgroups__V1__Metrics *
encode(const struct hvm_guest_stats *g)
{
	Io__Containerd__Cgroups__V1__Metrics *m;
	Google__Protobuf__Any any;

	assert_int_equal(shim_stats_encode(g, &any), 0);
	assert_string_equal(any.type_url, "io.containerd.cgroups.v1.Metrics");
	m = io__containerd__cgroups__v1__metrics__unpack(NULL, any.value.len,
							 any.value.data);
	free(any.value.data);
	assert_non_null(m);
	return m;
}

static void test_all_known(void **state)
{
	struct hvm_guest_stats g = {
		.cpu_usage_ns = 5000000,
		.cpu_user_ns = 3000000,
		.cpu_system_ns = 2000000,
		.memory_usage = 1 << 20,
		.memory_limit = 256u << 20,
		.pids_current = 3,
		.pids_limit = 0,
		.oom_kills = 1,
	};
	Io__Containerd__Cgroups__V1__Metrics *m;

	(void)state;
	m = encode(&g);
	assert_non_null(m->cpu);
	assert_non_null(m->cpu->usage);
	assert_int_equal(m->cpu->usage->total, 5000000);
	assert_int_equal(m->cpu->usage->user, 3000000);
	assert_int_equal(m->cpu->usage->kernel, 2000000);
	assert_non_null(m->memory);
	assert_non_null(m->memory->usage);
	assert_int_equal(m->memory->usage->usage, 1 << 20);
	assert_int_equal(m->memory->usage->limit, 256u << 20);
	assert_non_null(m->pids);
	assert_int_equal(m->pids->current, 3);
	assert_int_equal(m->pids->limit, 0);
	assert_non_null(m->memory_oom_control);
	assert_int_equal(m->memory_oom_control->oom_kill, 1);
	/* Nothing the guest does not count. */
	assert_null(m->blkio);
	assert_int_equal(m->n_hugetlb, 0);
	io__containerd__cgroups__v1__metrics__free_unpacked(m, NULL);
}

/*
 * A guest that could read nothing: ctr still finds the memory and cpu
 * it prints (as zeros), and no pids or OOM numbers made up.
 */
static void test_nothing_known(void **state)
{
	struct hvm_guest_stats g;
	Io__Containerd__Cgroups__V1__Metrics *m;

	(void)state;
	memset(&g, 0xff, sizeof(g));
	assert_true(g.pids_current == HVM_GUEST_STAT_UNKNOWN);
	m = encode(&g);
	assert_non_null(m->memory);
	assert_int_equal(m->memory->usage->usage, 0);
	assert_int_equal(m->memory->usage->limit, 0);
	assert_non_null(m->cpu);
	assert_int_equal(m->cpu->usage->total, 0);
	assert_null(m->pids);
	assert_null(m->memory_oom_control);
	io__containerd__cgroups__v1__metrics__free_unpacked(m, NULL);
}

/* A pod sandbox's numbers: the VMM process's /proc/PID/stat line. The
 * command holds ") " as a process may name itself. */
static void test_vmm_proc_stat(void **state)
{
	struct hvm_guest_stats g;
	const char *line =
		"4242 (hintvm (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 "
		"250 75 0 0 20 0 17 0 123456 300000000 5000 18446744073709551615\n";

	(void)state;
	assert_int_equal(shim_stats_parse_proc_stat(line, 100, 4096, &g), 0);
	assert_int_equal(g.cpu_user_ns, 2500000000ull);
	assert_int_equal(g.cpu_system_ns, 750000000ull);
	assert_int_equal(g.cpu_usage_ns, 3250000000ull);
	assert_int_equal(g.pids_current, 17);
	assert_int_equal(g.memory_usage, 5000ull * 4096);
	assert_true(g.memory_limit == HVM_GUEST_STAT_UNKNOWN);
	assert_true(g.oom_kills == HVM_GUEST_STAT_UNKNOWN);
	/* Cut short, no ")", or no sane sysconf: refused. */
	assert_int_equal(
		shim_stats_parse_proc_stat("4242 (x) S 1 2 3", 100, 4096, &g),
		-EINVAL);
	assert_int_equal(
		shim_stats_parse_proc_stat("4242 x S 1", 100, 4096, &g),
		-EINVAL);
	assert_int_equal(shim_stats_parse_proc_stat(line, 0, 4096, &g),
			 -EINVAL);
	assert_int_equal(shim_stats_parse_proc_stat(NULL, 100, 4096, &g),
			 -EINVAL);
}

/* A child process, read as the shim reads its VMM. (Not this process
 * itself: qemu-user, which runs the arm64 unit tests, answers
 * /proc/self/stat with made-up zeros.) */
static void test_vmm_child(void **state)
{
	struct hvm_guest_stats g;
	pid_t child;
	int r;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	r = shim_stats_vmm(child, &g);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(r, 0);
	assert_true(g.memory_usage > 0 &&
		    g.memory_usage != HVM_GUEST_STAT_UNKNOWN);
	assert_true(g.pids_current >= 1 &&
		    g.pids_current != HVM_GUEST_STAT_UNKNOWN);
	assert_true(g.cpu_usage_ns == g.cpu_user_ns + g.cpu_system_ns);
	assert_int_equal(shim_stats_vmm(-1, &g), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_known),
		cmocka_unit_test(test_nothing_known),
		cmocka_unit_test(test_vmm_proc_stat),
		cmocka_unit_test(test_vmm_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
