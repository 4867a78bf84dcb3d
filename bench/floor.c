// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench/floor: the least a KVM VMM can do, as a baseline for the startup
 * and exits benchmarks. It makes only the ioctls needed to run a tiny
 * 32-bit protected-mode guest (no irqchip, no CPUID table, no paging):
 *
 *	rdtsc; N times "out dx, al" to X86_BENCH_NOP_PORT; rdtsc;
 *	store the TSC delta at RESULT_GPA; print one byte on COM1;
 *	write the debug-exit port; hlt
 *
 * The exit loop is the same instruction sequence the test kernel's `exits`
 * payload runs at CPL0, so per-exit numbers compare like for like.
 *
 * Output (stdout): the guest's byte and a newline, then one line
 *	floor: exits=N cycles=C tsc_khz=K
 * With --hold-ms MS it then prints "floor: holding" and sleeps, so that a
 * benchmark can read /proc/PID/{status,smaps} of a live, finished VMM.
 * With --irqchip it also creates KVM's irqchip and PIT (KVM_CREATE_IRQCHIP,
 * KVM_CREATE_PIT2) before the vCPU: what any VMM with an in-kernel irqchip
 * pays to create and tear down (a `hlt` then stays in KVM, hence the
 * debug-exit write as the end marker).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86/platform.h"

#define GUEST_MEM_SIZE 0x10000 /* 64 KiB: code, result, nothing else */
#define CODE_GPA 0x1000
#define RESULT_GPA 0x2000

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put_u16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Assemble the guest program at CODE; returns its length. */
static size_t build_guest(uint8_t *code, uint32_t exits)
{
	size_t n = 0;
	size_t jz_at;

	code[n++] = 0xb9; /* mov ecx, imm32 */
	put_u32(code + n, exits);
	n += 4;
	code[n++] = 0x66; /* mov dx, imm16 */
	code[n++] = 0xba;
	put_u16(code + n, X86_BENCH_NOP_PORT);
	n += 2;
	code[n++] = 0x0f; /* rdtsc */
	code[n++] = 0x31;
	code[n++] = 0x89; /* mov esi, eax */
	code[n++] = 0xc6;
	code[n++] = 0x89; /* mov edi, edx */
	code[n++] = 0xd7;
	code[n++] = 0x85; /* test ecx, ecx */
	code[n++] = 0xc9;
	code[n++] = 0x74; /* jz done (patched below) */
	jz_at = n++;
	/* loop: out dx, al; dec ecx; jnz loop */
	code[n++] = 0xee;
	code[n++] = 0x49;
	code[n++] = 0x75;
	code[n++] = 0xfc;
	code[jz_at] = (uint8_t)(n - (jz_at + 1));
	/* done: */
	code[n++] = 0x0f; /* rdtsc */
	code[n++] = 0x31;
	code[n++] = 0x29; /* sub eax, esi */
	code[n++] = 0xf0;
	code[n++] = 0x19; /* sbb edx, edi */
	code[n++] = 0xfa;
	code[n++] = 0xa3; /* mov [RESULT_GPA], eax */
	put_u32(code + n, RESULT_GPA);
	n += 4;
	code[n++] = 0x89; /* mov [RESULT_GPA + 4], edx */
	code[n++] = 0x15;
	put_u32(code + n, RESULT_GPA + 4);
	n += 4;
	code[n++] = 0x66; /* mov dx, COM1 */
	code[n++] = 0xba;
	put_u16(code + n, X86_COM1_PORT);
	n += 2;
	code[n++] = 0xb0; /* mov al, '!' */
	code[n++] = '!';
	code[n++] = 0xee; /* out dx, al */
	code[n++] = 0x66; /* mov dx, X86_DEBUG_EXIT_PORT */
	code[n++] = 0xba;
	put_u16(code + n, X86_DEBUG_EXIT_PORT);
	n += 2;
	code[n++] = 0xee; /* out dx, al */
	code[n++] = 0xf4; /* hlt */
	return n;
}

static void flat_segment(struct kvm_segment *s, uint16_t selector, uint8_t type)
{
	*s = (struct kvm_segment){ .limit = 0xffffffff,
				   .selector = selector,
				   .type = type,
				   .present = 1,
				   .db = 1,
				   .s = 1,
				   .g = 1 };
}

static void usage(void)
{
	fprintf(stderr,
		"usage: floor [--exits N] [--hold-ms MS] [--irqchip]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint32_t exits = 0;
	unsigned long hold_ms = 0;
	int irqchip = 0;
	struct kvm_userspace_memory_region region;
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 0x2 };
	struct kvm_run *run;
	uint64_t cycles;
	uint8_t *mem;
	int kvm, vm, vcpu;
	long run_size, tsc_khz;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exits") && i + 1 < argc)
			exits = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc)
			hold_ms = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--irqchip"))
			irqchip = 1;
		else
			usage();
	}

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");
	mem = mmap(NULL, GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory");
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = GUEST_MEM_SIZE,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");
	build_guest(mem + CODE_GPA, exits);
	if (irqchip) {
		struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

		if (ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0)
			die("KVM_CREATE_IRQCHIP");
		if (ioctl(vm, KVM_CREATE_PIT2, &pit) < 0)
			die("KVM_CREATE_PIT2");
	}

	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		die("KVM_CREATE_VCPU");
	run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size <= 0)
		die("KVM_GET_VCPU_MMAP_SIZE");
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run");
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	flat_segment(&sregs.cs, 0x08, 0xb);
	flat_segment(&sregs.ds, 0x10, 0x3);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.cr0 = 0x11; /* PE | ET: protected mode, no paging */
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		die("KVM_SET_SREGS");
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_REGS");

	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			die("KVM_RUN");
		}
		if (run->exit_reason == KVM_EXIT_HLT)
			break;
		if (run->exit_reason != KVM_EXIT_IO) {
			fprintf(stderr, "floor: unexpected exit reason %u\n",
				run->exit_reason);
			return 1;
		}
		if (run->io.port == X86_DEBUG_EXIT_PORT)
			break;
		if (run->io.port == X86_COM1_PORT &&
		    run->io.direction == KVM_EXIT_IO_OUT) {
			char c = *((char *)run + run->io.data_offset);

			printf("%c\n", c);
			fflush(stdout);
		}
	}

	memcpy(&cycles, mem + RESULT_GPA, sizeof(cycles));
	tsc_khz = ioctl(vcpu, KVM_GET_TSC_KHZ, 0);
	printf("floor: exits=%u cycles=%llu tsc_khz=%ld\n", exits,
	       (unsigned long long)cycles, tsc_khz);
	if (hold_ms) {
		struct timespec ts = { .tv_sec = (time_t)(hold_ms / 1000),
				       .tv_nsec = (long)(hold_ms % 1000) *
						  1000000L };

		printf("floor: holding\n");
		fflush(stdout);
		nanosleep(&ts, NULL);
	}
	return 0;
}
