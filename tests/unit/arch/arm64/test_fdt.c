// SPDX-License-Identifier: LGPL-2.1-or-later
/* The generated device tree, parsed back with libfdt. */
#include <errno.h>
#include <libfdt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arm64/fdt.h"
#include "arch/arm64/platform.h"

#define BUF_SIZE (64u << 10)

static const uint64_t mpidrs[] = { 0x80000000, 0x80000001, 0x80000002,
				   0x80000100 };

static struct arm64_fdt_params params(unsigned int cpus)
{
	static const struct arm64_fdt_mmio_dev virtio[] = {
		{ ARM64_VIRTIO_MMIO_GPA, ARM64_VIRTIO_MMIO_SIZE, 16 },
		{ ARM64_VIRTIO_MMIO_GPA + 0x200, ARM64_VIRTIO_MMIO_SIZE, 17 },
	};

	return (struct arm64_fdt_params){
		.nr_cpus = cpus,
		.mpidr = mpidrs,
		.ram_gpa = ARM64_RAM_GPA,
		.ram_size = 256ULL << 20,
		.gicd_gpa = ARM64_GICD_GPA,
		.gicd_size = ARM64_GICD_SIZE,
		.gicr_gpa = ARM64_GICR_GPA,
		.gicr_size = cpus * ARM64_GICR_STRIDE,
		.uart = { ARM64_UART_GPA, ARM64_UART_SIZE, ARM64_UART_SPI },
		.bootargs = "console=ttyS0 quiet",
		.initrd_gpa = 0x4f000000,
		.initrd_size = 0x12345,
		.virtio = virtio,
		.nr_virtio = 2,
		.hint_gpa = ARM64_HINT_GPA,
		.pvpanic_gpa = ARM64_PVPANIC_GPA,
	};
}

static void *build(const struct arm64_fdt_params *p)
{
	void *fdt = calloc(1, BUF_SIZE);
	int size;

	assert_non_null(fdt);
	size = arm64_fdt_build(p, fdt, BUF_SIZE);
	assert_true(size > 0);
	assert_int_equal(fdt_check_header(fdt), 0);
	assert_int_equal((int)fdt_totalsize(fdt), size);
	return fdt;
}

static const void *getprop(const void *fdt, const char *path, const char *name,
			   int *len)
{
	int node = fdt_path_offset(fdt, path);
	const void *v;

	if (node < 0)
		fail_msg("no node %s", path);
	v = fdt_getprop(fdt, node, name, len);
	if (!v)
		fail_msg("no property %s in %s", name, path);
	return v;
}

static uint64_t cell64(const void *p, int index)
{
	fdt64_t v;

	memcpy(&v, (const uint8_t *)p + 8 * index, 8);
	return fdt64_to_cpu(v);
}

static uint32_t cell32(const void *p, int index)
{
	fdt32_t v;

	memcpy(&v, (const uint8_t *)p + 4 * index, 4);
	return fdt32_to_cpu(v);
}

static void test_cpu_count_and_mpidr(void **state)
{
	for (unsigned int n = 1; n <= 4; n++) {
		struct arm64_fdt_params p = params(n);
		void *fdt = build(&p);
		int cpus = fdt_path_offset(fdt, "/cpus"), node, count = 0;

		assert_true(cpus >= 0);
		fdt_for_each_subnode(node, fdt, cpus)
		{
			int len;
			const char *method =
				fdt_getprop(fdt, node, "enable-method", &len);
			const void *reg = fdt_getprop(fdt, node, "reg", &len);

			assert_string_equal(method, "psci");
			assert_int_equal(len, 4);
			/* MPIDR affinity only: bit 31 (RES1) is not in reg. */
			assert_int_equal(cell32(reg, 0),
					 mpidrs[count] & 0xffffff);
			count++;
		}
		assert_int_equal(count, n);
		free(fdt);
	}
}

static void test_memory_and_gic(void **state)
{
	struct arm64_fdt_params p = params(3);
	void *fdt = build(&p);
	const void *reg;
	int len;

	reg = getprop(fdt, "/memory@40000000", "reg", &len);
	assert_int_equal(len, 16);
	assert_int_equal(cell64(reg, 0), ARM64_RAM_GPA);
	assert_int_equal(cell64(reg, 1), 256ULL << 20);

	reg = getprop(fdt, "/intc@8000000", "reg", &len);
	assert_int_equal(len, 32);
	assert_int_equal(cell64(reg, 0), ARM64_GICD_GPA);
	assert_int_equal(cell64(reg, 1), ARM64_GICD_SIZE);
	assert_int_equal(cell64(reg, 2), ARM64_GICR_GPA);
	assert_int_equal(cell64(reg, 3), 3 * ARM64_GICR_STRIDE);
	assert_string_equal(getprop(fdt, "/intc@8000000", "compatible", &len),
			    "arm,gic-v3");
	assert_int_equal(
		fdt_node_check_compatible(fdt, fdt_path_offset(fdt, "/psci"),
					  "arm,psci-0.2"),
		0);
	assert_string_equal(getprop(fdt, "/psci", "method", &len), "hvc");
	/* Four timer PPIs: secure, non-secure, virtual, hypervisor. */
	getprop(fdt, "/timer", "interrupts", &len);
	assert_int_equal(len, 4 * 3 * 4);
	assert_true(fdt_path_offset(fdt, "/pmu") < 0); /* only when asked */
	free(fdt);

	p.pmu = true;
	fdt = build(&p);
	assert_string_equal(getprop(fdt, "/pmu", "compatible", &len),
			    "arm,armv8-pmuv3");
	assert_int_equal(cell32(getprop(fdt, "/pmu", "interrupts", &len), 1),
			 ARM64_PPI_PMU);
	free(fdt);
}

static void test_chosen_and_devices(void **state)
{
	struct arm64_fdt_params p = params(1);
	void *fdt = build(&p);
	const void *v;
	int len;

	assert_string_equal(getprop(fdt, "/chosen", "bootargs", &len),
			    "console=ttyS0 quiet");
	assert_string_equal(getprop(fdt, "/chosen", "stdout-path", &len),
			    "/uart@9000000");
	v = getprop(fdt, "/chosen", "linux,initrd-start", &len);
	assert_int_equal(len, 8);
	assert_int_equal(cell64(v, 0), 0x4f000000);
	v = getprop(fdt, "/chosen", "linux,initrd-end", &len);
	assert_int_equal(cell64(v, 0), 0x4f000000 + 0x12345);

	assert_string_equal(getprop(fdt, "/uart@9000000", "compatible", &len),
			    "ns16550a");
	v = getprop(fdt, "/uart@9000000", "interrupts", &len);
	assert_int_equal(len, 12);
	assert_int_equal(cell32(v, 0), 0); /* SPI */
	assert_int_equal(cell32(v, 1), ARM64_UART_SPI);

	v = getprop(fdt, "/virtio_mmio@a000200", "interrupts", &len);
	assert_int_equal(cell32(v, 1), 17);
	v = getprop(fdt, "/virtio_mmio@a000200", "reg", &len);
	assert_int_equal(cell64(v, 0), ARM64_VIRTIO_MMIO_GPA + 0x200);

	assert_int_equal(
		fdt_node_offset_by_compatible(fdt, -1, "hintvm,sched-hint"),
		fdt_path_offset(fdt, "/sched-hint@9010000"));
	v = getprop(fdt, "/sched-hint@9010000", "reg", &len);
	assert_int_equal(cell64(v, 0), ARM64_HINT_GPA);
	assert_int_equal(cell64(v, 1), ARM64_HINT_SIZE);

	/* Linux's pvpanic-mmio driver: this compatible, a 1-byte register. */
	assert_int_equal(
		fdt_node_offset_by_compatible(fdt, -1, "qemu,pvpanic-mmio"),
		fdt_path_offset(fdt, "/pvpanic-mmio@9020000"));
	v = getprop(fdt, "/pvpanic-mmio@9020000", "reg", &len);
	assert_int_equal(len, 16);
	assert_int_equal(cell64(v, 0), ARM64_PVPANIC_GPA);
	assert_int_equal(cell64(v, 1), 1);
	free(fdt);
}

static void test_no_initrd_no_bootargs(void **state)
{
	struct arm64_fdt_params p = params(1);
	void *fdt;
	int chosen, len;

	p.initrd_size = 0;
	p.bootargs = NULL;
	p.nr_virtio = 0;
	p.hint_gpa = 0;
	p.pvpanic_gpa = 0;
	fdt = build(&p);
	chosen = fdt_path_offset(fdt, "/chosen");
	assert_null(fdt_getprop(fdt, chosen, "linux,initrd-start", &len));
	assert_null(fdt_getprop(fdt, chosen, "bootargs", &len));
	assert_true(fdt_path_offset(fdt, "/virtio_mmio@a000000") < 0);
	assert_true(fdt_node_offset_by_compatible(fdt, -1,
						  "hintvm,sched-hint") < 0);
	assert_true(fdt_node_offset_by_compatible(fdt, -1,
						  "qemu,pvpanic-mmio") < 0);
	free(fdt);
}

static void test_small_buffer_fails_cleanly(void **state)
{
	struct arm64_fdt_params p = params(4);
	char buf[256];

	assert_int_equal(arm64_fdt_build(&p, buf, sizeof(buf)), -ENOSPC);
	p.nr_cpus = 0;
	assert_int_equal(arm64_fdt_build(&p, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_count_and_mpidr),
		cmocka_unit_test(test_memory_and_gic),
		cmocka_unit_test(test_chosen_and_devices),
		cmocka_unit_test(test_no_initrd_no_bootargs),
		cmocka_unit_test(test_small_buffer_fails_cleanly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
