// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * syscall-probe: makes a few system calls that need no capability and that
 * podman's default seccomp profile does not allow, and prints each one's
 * outcome ("name=ok" or "name=ERRNO-NAME"), for the oci tiers to compare
 * a container in a hintvm VM with the same container under runc (busybox
 * has no applet that makes them). Static: the test image has no libc.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void report(const char *name, long ret)
{
	const char *e = ret >= 0 ? "ok" : strerrorname_np(errno);

	printf("%s=%s\n", name, e ? e : "?");
}

int main(void)
{
	/* sysfs(3): how many file system types the kernel knows. arm64's
	 * (generic) syscall table has no sysfs: the line says so. */
#ifdef SYS_sysfs
	report("sysfs", syscall(SYS_sysfs, 3));
#else
	printf("sysfs=absent\n");
#endif
	/* keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, create) */
	report("keyctl", syscall(SYS_keyctl, 0, -2, 1));
	/* personality(PER_LINUX | ADDR_NO_RANDOMIZE), then back. */
	report("personality", syscall(SYS_personality, 0x0040000));
	syscall(SYS_personality, 0);
	return 0;
}
