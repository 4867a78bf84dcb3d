// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of src/runtime/cgroup.c: linux.cgroupsPath -> a cgroupfs path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/cgroup.h"

static void expect(const char *in, const char *want)
{
	char out[256];

	assert_int_equal(rt_cgroup_resolve(in, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_resolve(void **state)
{
	char out[256];

	expect("/default/c1", "/default/c1");
	expect("machine.slice:libpod:abc", "machine.slice/libpod-abc.scope");
	expect("kubepods-besteffort-pod1.slice:cri-containerd:abc",
	       "kubepods.slice/kubepods-besteffort.slice/"
	       "kubepods-besteffort-pod1.slice/cri-containerd-abc.scope");
	expect(":libpod:abc", "system.slice/libpod-abc.scope");
	/* Nothing climbs out of the cgroup tree. */
	assert_int_not_equal(
		rt_cgroup_resolve("/a/../../etc", out, sizeof(out)), 0);
	assert_int_not_equal(
		rt_cgroup_resolve("x.slice:p:../../n", out, sizeof(out)), 0);
	assert_int_not_equal(
		rt_cgroup_resolve("notaslice:p:n", out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
