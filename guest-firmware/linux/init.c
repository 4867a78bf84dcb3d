// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PID 1 of the end-to-end test guests. It reports what the guest sees in
 * one machine-readable line on the console, then does what the kernel
 * command line asks (e2e.action=poweroff|reboot|panic|halt):
 *
 *   E2E-GUEST init uptime=0.84 nproc=2 marker=hintvm-e2e-initrd cmdline="..."
 *   E2E-GUEST action=poweroff
 *
 * "panic" makes PID 1 exit, which the kernel answers with "Attempted to
 * kill init!"; with panic=-1 on the command line that becomes a reset.
 * Statically linked: the initramfs holds nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER_PATH "/e2e-marker"

static void read_file(const char *path, char *buf, size_t size)
{
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	buf[n] = 0;
	/* One line only: strip the trailing newline and anything after. */
	buf[strcspn(buf, "\n")] = 0;
}

static void mount_fs(const char *type, const char *dir)
{
	mkdir(dir, 0755);
	if (mount(type, dir, type, 0, NULL) && errno != EBUSY)
		printf("E2E-GUEST warning: mount %s on %s: %s\n", type, dir,
		       strerror(errno));
}

/* The value of KEY=... in the command line, copied to OUT ("" if none). */
static void cmdline_value(const char *cmdline, const char *key, char *out,
			  size_t size)
{
	size_t klen = strlen(key);
	const char *p = cmdline;

	out[0] = 0;
	while ((p = strstr(p, key))) {
		if ((p == cmdline || p[-1] == ' ') && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, " ");

			if (n >= size)
				n = size - 1;
			memcpy(out, p + klen + 1, n);
			out[n] = 0;
			return;
		}
		p += klen;
	}
}

int main(void)
{
	char cmdline[4096], uptime[64], marker[256], action[32];
	long nproc;

	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("devtmpfs", "/dev");
	read_file("/proc/uptime", uptime, sizeof(uptime));
	uptime[strcspn(uptime, " ")] = 0;
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	read_file(MARKER_PATH, marker, sizeof(marker));
	nproc = sysconf(_SC_NPROCESSORS_ONLN);

	printf("E2E-GUEST init uptime=%s nproc=%ld marker=%s cmdline=\"%s\"\n",
	       uptime, nproc, marker[0] ? marker : "(none)", cmdline);

	cmdline_value(cmdline, "e2e.action", action, sizeof(action));
	if (!action[0])
		strcpy(action, "poweroff");
	printf("E2E-GUEST action=%s\n", action);
	fflush(stdout);
	sync();

	if (!strcmp(action, "reboot"))
		reboot(RB_AUTOBOOT);
	else if (!strcmp(action, "panic"))
		return 1; /* the kernel panics when init exits */
	else if (!strcmp(action, "halt"))
		reboot(RB_HALT_SYSTEM);
	else
		reboot(RB_POWER_OFF);
	printf("E2E-GUEST error: reboot(%s) returned: %s\n", action,
	       strerror(errno));
	fflush(stdout);
	for (;;)
		pause();
}
