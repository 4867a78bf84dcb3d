// SPDX-License-Identifier: LGPL-2.1-or-later
/* The CPUID a vCPU sees, built from a recorded-looking supported table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/cpuid.h"

static struct kvm_cpuid2 *supported(void)
{
	static const struct kvm_cpuid_entry2 entries[] = {
		{ .function = 0, .eax = 0x1f },
		{ .function = 1,
		  .eax = 0x800f12,
		  .ebx = 0x00010800,
		  .ecx = 0x76d8320b,
		  .edx = 0x178bfbff },
		{ .function = 4,
		  .eax = 0x121,
		  .index = 0,
		  .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX },
		{ .function = 0xb,
		  .index = 0,
		  .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX },
		{ .function = 0xb,
		  .index = 1,
		  .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX },
		{ .function = KVM_CPUID_SIGNATURE_LEAF },
		{ .function = KVM_CPUID_FEATURES_LEAF, .eax = 0x01007efb },
		{ .function = 0x80000008, .ecx = 0x3 },
	};
	size_t n = sizeof(entries) / sizeof(entries[0]);
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(entries[0]));

	c->nent = (uint32_t)n;
	memcpy(c->entries, entries, sizeof(entries));
	return c;
}

static struct kvm_cpuid2 *for_vcpu(const struct kvm_cpuid2 *src,
				   unsigned int apic_id,
				   const struct cpuid_vm_params *p)
{
	struct kvm_cpuid2 *dst =
		calloc(1, sizeof(*dst) + (src->nent + CPUID_EXTRA_ENTRIES) *
						 sizeof(dst->entries[0]));

	cpuid_for_vcpu(src, dst, apic_id, p);
	return dst;
}

static void test_identity_and_kvm_leaves(void **state)
{
	struct kvm_cpuid2 *src = supported();
	struct cpuid_vm_params p = { .nr_cpus = 4,
				     .tsc_deadline = true,
				     .kvm_features = 0x3 };
	struct kvm_cpuid2 *c = for_vcpu(src, 3, &p);
	struct kvm_cpuid_entry2 *e;

	e = cpuid_find(c, 1, 0);
	assert_int_equal(e->ebx >> 24, 3); /* initial APIC id */
	assert_int_equal((e->ebx >> 16) & 0xff, 4);
	assert_true(e->ecx & (1u << 31)); /* hypervisor */
	assert_true(e->ecx & (1u << 24)); /* TSC deadline */
	assert_true(e->edx & (1u << 28)); /* HTT: more than one CPU */
	assert_int_equal(cpuid_find(c, 0xb, 0)->edx, 3); /* x2APIC id */
	assert_int_equal(cpuid_find(c, 0xb, 1)->ebx, 4);
	assert_int_equal(cpuid_find(c, 0x80000008, 0)->ecx & 0xff, 3);

	e = cpuid_find(c, KVM_CPUID_SIGNATURE_LEAF, 0);
	assert_memory_equal(&e->ebx, "KVMK", 4);
	assert_memory_equal(&e->ecx, "VMKV", 4);
	assert_memory_equal(&e->edx, "M\0\0\0", 4);
	assert_int_equal(e->eax, KVM_CPUID_FEATURES_LEAF);
	assert_int_equal(cpuid_find(c, KVM_CPUID_FEATURES_LEAF, 0)->eax, 0x3);
	assert_null(cpuid_find(c, HV_CPUID_TIMING_LEAF, 0));
	free(c);
	free(src);
}

static void test_no_tsc_deadline_when_host_lacks_it(void **state)
{
	struct kvm_cpuid2 *src = supported();
	struct cpuid_vm_params p = { .nr_cpus = 1 };
	struct kvm_cpuid2 *c;

	cpuid_find(src, 1, 0)->ecx |= 1u << 24;
	c = for_vcpu(src, 0, &p);
	assert_false(cpuid_find(c, 1, 0)->ecx & (1u << 24));
	assert_false(cpuid_find(c, 1, 0)->edx & (1u << 28));
	free(c);
	free(src);
}

static void test_timing_leaf_added_once(void **state)
{
	struct kvm_cpuid2 *src = supported();
	struct cpuid_vm_params p = { .nr_cpus = 2, .tsc_khz = 2995200 };
	struct kvm_cpuid2 *c = for_vcpu(src, 1, &p);
	unsigned int count = 0;

	assert_int_equal(c->nent, src->nent + 1);
	for (uint32_t i = 0; i < c->nent; i++)
		count += c->entries[i].function == HV_CPUID_TIMING_LEAF;
	assert_int_equal(count, 1);
	assert_int_equal(cpuid_find(c, HV_CPUID_TIMING_LEAF, 0)->eax, 2995200);
	assert_int_equal(cpuid_find(c, KVM_CPUID_SIGNATURE_LEAF, 0)->eax,
			 HV_CPUID_TIMING_LEAF);
	free(c);
	free(src);
}

/*
 * What an older kernel's KVM_GET_CPUID2 leaves in a table of 256: the
 * vCPU's entries, then calloc's zeros, with nent still 256. Trimmed to
 * the real ones; a zero register inside a real entry is no padding.
 */
static void test_get_cpuid2_padding_trimmed(void **state)
{
	struct kvm_cpuid2 *real = supported();
	struct kvm_cpuid2 *c =
		calloc(1, sizeof(*c) + 256 * sizeof(c->entries[0]));
	struct kvm_cpuid_entry2 *leaf0;

	(void)state;
	memcpy(c->entries, real->entries, real->nent * sizeof(c->entries[0]));
	c->nent = 256;
	/* The padding looks like a "leaf 0" to a lookup by function. */
	assert_true(cpuid_entry_is_padding(&c->entries[200]));
	assert_int_equal(c->entries[200].function, 0);
	cpuid_trim_padding(c);
	assert_int_equal(c->nent, real->nent);
	leaf0 = cpuid_find(c, 0, 0);
	assert_non_null(leaf0);
	assert_int_equal(leaf0->eax, 0x1f);
	/* The signature leaf has zero registers, and is kept. */
	assert_false(cpuid_entry_is_padding(
		cpuid_find(c, KVM_CPUID_SIGNATURE_LEAF, 0)));
	/* Nothing to trim: unchanged; all padding: empty. */
	cpuid_trim_padding(c);
	assert_int_equal(c->nent, real->nent);
	memset(c->entries, 0, 256 * sizeof(c->entries[0]));
	c->nent = 256;
	cpuid_trim_padding(c);
	assert_int_equal(c->nent, 0);
	free(c);
	free(real);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_and_kvm_leaves),
		cmocka_unit_test(test_no_tsc_deadline_when_host_lacks_it),
		cmocka_unit_test(test_timing_leaf_added_once),
		cmocka_unit_test(test_get_cpuid2_padding_trimmed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
