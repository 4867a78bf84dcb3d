// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/kvm.h>
#include <linux/kvm_para.h>

#include "arch/x86/hypercall_probe.h"
#include "base/log.h"

/* A signal hintvm uses nowhere else; only ever pending, never handled. */
#define PROBE_SIGNAL (SIGRTMIN + 7)
#define PROBE_TIMEOUT_NS 100000000L /* a working hypercall takes µs */
#define PROBE_CODE_GPA 0x1000

/*
 * Real mode at 0x1000: eax = KVM_HC_VAPIC_POLL_IRQ (a no-op returning 0),
 * vmcall, hlt. KVM rewrites vmcall/vmmcall for the host's vendor.
 */
static const uint8_t probe_code[] = {
	0x66, 0xb8, KVM_HC_VAPIC_POLL_IRQ,
	0x00, 0x00, 0x00, /* mov eax, 1 */
	0x0f, 0x01, 0xc1, /* vmcall */
	0xf4, /* hlt */
};

/* Run the probe VM's vCPU with PROBE_SIGNAL as a timeout. */
static int run_with_timeout(int vcpu_fd, struct kvm_run *run)
{
	struct {
		struct kvm_signal_mask hdr;
		uint8_t set[8]; /* the kernel's sigset_t on x86-64 */
	} kmask;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = PROBE_SIGNAL };
	struct itimerspec its = { .it_value = { 0, PROBE_TIMEOUT_NS } };
	struct timespec zero = { 0, 0 };
	sigset_t block, old, during;
	timer_t timer;
	int r;

	/*
	 * The signal is blocked in this thread but unblocked inside KVM_RUN
	 * (KVM_SET_SIGNAL_MASK): it interrupts the guest, and on the way out
	 * it is blocked again, so no handler ever runs; sigtimedwait eats it.
	 */
	sigemptyset(&block);
	sigaddset(&block, PROBE_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	during = old;
	sigdelset(&during, PROBE_SIGNAL);
	kmask.hdr.len = sizeof(kmask.set);
	memcpy(kmask.set, &during, sizeof(kmask.set));
	sev._sigev_un._tid = gettid();
	r = -1;
	if (ioctl(vcpu_fd, KVM_SET_SIGNAL_MASK, &kmask) == 0 &&
	    timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0) {
		timer_settime(timer, 0, &its, NULL);
		r = ioctl(vcpu_fd, KVM_RUN, 0);
		timer_delete(timer);
		if (r == 0 && run->exit_reason == KVM_EXIT_HLT)
			r = 1;
		else
			r = 0;
		sigtimedwait(&block, NULL,
			     &zero); /* the timeout, if it fired */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

static bool probe(int kvm_fd)
{
	struct kvm_userspace_memory_region region = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run = MAP_FAILED;
	int vm = -1, vcpu = -1;
	long run_size;
	uint8_t *mem;
	bool works = false;

	mem = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return false;
	memcpy(mem + PROBE_CODE_GPA, probe_code, sizeof(probe_code));
	vm = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm < 0)
		goto out;
	region.memory_size = 0x2000;
	region.userspace_addr = (uintptr_t)mem;
	vcpu = -1;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		goto out;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	run_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vcpu < 0 || run_size <= 0)
		goto out;
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu, 0);
	if (run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		goto out;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	regs = (struct kvm_regs){ .rip = PROBE_CODE_GPA, .rflags = 2 };
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 ||
	    ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		goto out;
	if (run_with_timeout(vcpu, run) == 1 &&
	    ioctl(vcpu, KVM_GET_REGS, &regs) == 0)
		works = (uint32_t)regs.rax == 0;
out:
	if (run != MAP_FAILED)
		munmap(run, (size_t)run_size);
	if (vcpu >= 0)
		close(vcpu);
	if (vm >= 0)
		close(vm);
	munmap(mem, 0x2000);
	return works;
}

/*
 * The probe costs its full timeout (100 ms) exactly on hosts where
 * hypercalls hang, i.e. at every start on such a host. The answer only
 * changes with the host kernel, so it is remembered per boot in a file
 * owned by this user: /run/hintvm for root, $XDG_RUNTIME_DIR otherwise.
 */
static bool cache_path(char *path, size_t len)
{
	const char *dir = geteuid() == 0 ? "/run" : getenv("XDG_RUNTIME_DIR");

	if (!dir || !*dir)
		return false;
	snprintf(path, len, "%s/hintvm", dir);
	mkdir(path, 0755);
	snprintf(path, len, "%s/hintvm/hypercall-probe", dir);
	return true;
}

static bool read_boot_id(char *id, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(id, (int)len, f) != NULL;
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
	return ok && *id;
}

static int cached_probe(void)
{
	char path[256], boot_id[64], line[128];
	struct stat st;
	int works = -1;
	FILE *f;

	if (!cache_path(path, sizeof(path)) ||
	    !read_boot_id(boot_id, sizeof(boot_id)))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* Only a file this user wrote is trusted. */
	if (fstat(fileno(f), &st) == 0 && st.st_uid == geteuid() &&
	    fgets(line, sizeof(line), f)) {
		size_t n = strlen(boot_id);

		if (!strncmp(line, boot_id, n) && line[n] == ' ' &&
		    (line[n + 1] == '0' || line[n + 1] == '1'))
			works = line[n + 1] == '1';
	}
	fclose(f);
	return works;
}

static void remember_probe(bool works)
{
	char path[256], tmp[272], boot_id[64];
	FILE *f;

	if (!cache_path(path, sizeof(path)) ||
	    !read_boot_id(boot_id, sizeof(boot_id)))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s %d\n", boot_id, works);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}

bool x86_hypercalls_work(int kvm_fd)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int known = -1; /* per process: the host does not change */
	bool works;

	pthread_mutex_lock(&lock);
	if (known < 0)
		known = cached_probe();
	if (known < 0) {
		known = probe(kvm_fd);
		remember_probe(known);
		pr_info("hypercalls on this host: %s",
			known ? "served"
			      : "not served (PV bits needing them are masked)");
	}
	works = known;
	pthread_mutex_unlock(&lock);
	return works;
}
