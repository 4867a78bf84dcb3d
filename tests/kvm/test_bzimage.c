// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The 64-bit Linux boot protocol on the development hosts' own /dev/kvm:
 * a hand-made bzImage whose "kernel" is a few instructions that check the
 * zero page hintvm built (HdrS magic, a command line pointer, the e820
 * count) and report through the debug-exit port. Real kernels take this
 * path in the nested e2e tier; this covers it where Linux cannot boot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kvm_test.h"

#define SETUP_SECTS 1
#define PAYLOAD_OFFSET ((SETUP_SECTS + 1) * 512)
#define PAYLOAD_SIZE 4096
#define ENTRY64 0x200 /* 64-bit entry: load address + 0x200 */
#define STUB_OK 0x2a

/* 64-bit code at the entry; RSI = boot_params. */
/* clang-format off */
static const uint8_t stub[] = {
	0x81, 0xbe, 0x02, 0x02, 0x00, 0x00, 'H', 'd', 'r', 'S', /* cmpl $HdrS,0x202(%rsi) */
	0x75, 0x19,                               /* jne bad */
	0x83, 0xbe, 0x28, 0x02, 0x00, 0x00, 0x00, /* cmpl $0,0x228(%rsi): cmd_line_ptr */
	0x74, 0x10,                               /* je bad */
	0x80, 0xbe, 0xe8, 0x01, 0x00, 0x00, 0x02, /* cmpb $2,0x1e8(%rsi): e820 entries */
	0x72, 0x07,                               /* jb bad */
	0xb8, STUB_OK, 0x00, 0x00, 0x00,          /* mov $OK,%eax */
	0xeb, 0x05,                               /* jmp out */
	0xb8, 0x01, 0x00, 0x00, 0x00,             /* bad: mov $1,%eax */
	0x66, 0xba, 0xf4, 0x00,                   /* out: mov $0xf4,%dx */
	0xef,                                     /* out %eax,(%dx) */
	0xf4,                                     /* hlt */
	0xeb, 0xfd,                               /* jmp hlt */
};
/* clang-format on */

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#define BZIMAGE_TEMPLATE "/tmp/hintvm-bzimage-XXXXXX"

/* Write a minimal relocatable 64-bit bzImage to a new temporary PATH. */
static void write_bzimage(char path[sizeof(BZIMAGE_TEMPLATE)], uint16_t version)
{
	static uint8_t img[PAYLOAD_OFFSET + PAYLOAD_SIZE];
	FILE *f;
	int fd;

	memset(img, 0, sizeof(img));
	img[0x1f1] = SETUP_SECTS;
	/* The jump over the header says how long the header is. */
	img[0x200] = 0xeb;
	img[0x201] = 0x68 - 0x02; /* header runs to 0x268 */
	put32(img + 0x1f4, PAYLOAD_SIZE / 16); /* syssize */
	put16(img + 0x1fe, 0xaa55); /* boot_flag */
	memcpy(img + 0x202, "HdrS", 4);
	put16(img + 0x206, version);
	img[0x211] = 0x01; /* loadflags: LOADED_HIGH */
	put32(img + 0x22c, 0x7fffffff); /* initrd_addr_max */
	put32(img + 0x230, 0x200000); /* kernel_alignment */
	img[0x234] = 1; /* relocatable_kernel */
	put16(img + 0x236, 0x3); /* XLF_KERNEL_64 | CAN_BE_LOADED_ABOVE_4G */
	put32(img + 0x238, 2047); /* cmdline_size */
	put64(img + 0x258, 0x1000000); /* pref_address */
	put32(img + 0x260, 0x200000); /* init_size */
	memcpy(img + PAYLOAD_OFFSET + ENTRY64, stub, sizeof(stub));
	strcpy(path, BZIMAGE_TEMPLATE);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, sizeof(img), f), sizeof(img));
	fclose(f);
}

static void test_zero_page_reaches_the_64bit_entry(void **state)
{
	char path[sizeof(BZIMAGE_TEMPLATE)];
	struct guest_run run;

	write_bzimage(path, 0x020f);
	for (unsigned int cpus = 1; cpus <= 2; cpus++) {
		assert_int_equal(
			guest_boot(&run, path, cpus, "console=ttyS0", NULL), 0);
		if (run.exit.reason != HVM_EXIT_DEBUG)
			printf("exit: %s (%s)\n",
			       hvm_exit_reason_name(run.exit.reason),
			       run.exit.detail);
		assert_int_equal(run.exit.reason, HVM_EXIT_DEBUG);
		assert_int_equal(run.exit.debug_code, STUB_OK);
		guest_run_free(&run);
	}
	unlink(path);
}

/*
 * The stub ends the VM within microseconds of the first KVM_RUN, while the
 * other vCPUs may still be starting or already asleep in KVM_RUN waiting
 * for INIT: the stop must reach them every time (a kick could be lost
 * before vCPU threads published themselves; 8 hangs in 600 runs).
 */
static void test_instant_stop_never_strands_a_vcpu(void **state)
{
	char path[sizeof(BZIMAGE_TEMPLATE)];
	struct guest_run run;

	write_bzimage(path, 0x020f);
	for (unsigned int i = 0; i < 100; i++) {
		assert_int_equal(guest_boot(&run, path, 4, "", NULL), 0);
		assert_int_equal(run.exit.debug_code, STUB_OK);
		guest_run_free(&run);
	}
	unlink(path);
}

static void test_old_protocol_refused_before_start(void **state)
{
	char path[sizeof(BZIMAGE_TEMPLATE)];
	struct guest_run run;

	write_bzimage(path, 0x0204);
	assert_int_equal(guest_boot(&run, path, 1, "", NULL), -1);
	assert_non_null(strstr(hvm_last_error(), path));
	guest_run_free(&run);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_page_reaches_the_64bit_entry),
		cmocka_unit_test(test_instant_stop_never_strands_a_vcpu),
		cmocka_unit_test(test_old_protocol_refused_before_start),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
