// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PID 1 of the end-to-end test guests. It reports what the guest sees in
 * one machine-readable line on the console, then does what the kernel
 * command line asks (e2e.action=poweroff|reboot|panic|halt):
 *
 *   E2E-GUEST init uptime=0.84 nproc=2 marker=hintvm-e2e-initrd cmdline="..."
 *   E2E-GUEST modules loaded=pvpanic.ko,pvpanic-mmio.ko failed=
 *   E2E-GUEST platform hypervisor=1 tsc_deadline=1 clocksource=kvm-clock rtc=1 i8042=1 pvpanic=3
 *   E2E-GUEST action=poweroff
 *
 * Before that it loads the kernel modules listed in /modules/order (one
 * file name a line, from /modules/), if the initramfs has them: the e2e
 * tier appends the pvpanic driver there (tests/e2e/prepare).
 *
 * The platform line shows whether the kernel found what a guest needs to
 * boot without stalls: the CPUID hypervisor bit and TSC-deadline timer,
 * its clocksource, the CMOS RTC (rtc0) and the i8042 (serio0); and the
 * events the pvpanic device offers as its driver read them (0: no driver
 * bound to a pvpanic device).
 *
 * "panic" makes PID 1 exit, which the kernel answers with "Attempted to
 * kill init!"; the pvpanic driver then reports the panic to the VMM (with
 * no driver, panic=-1 on the command line makes it a reset).
 * Statically linked: the initramfs holds nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MARKER_PATH "/e2e-marker"
#define MODULE_DIR "/modules"

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

static int path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* 1 when FLAG is among the "flags" of the first CPU in /proc/cpuinfo. */
static int cpu_has_flag(const char *flag)
{
	static char info[16384];
	size_t flen = strlen(flag);
	char *p;
	ssize_t n = -1;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, info, sizeof(info) - 1);
		close(fd);
	}
	if (n <= 0)
		return 0;
	info[n] = 0;
	p = strstr(info, "\nflags");
	if (!p)
		return 0;
	p[strcspn(p + 1, "\n") + 1] = 0; /* only the first CPU's line */
	for (p = strchr(p, ':'); p && (p = strstr(p, flag)); p += flen)
		if (p[-1] == ' ' && (p[flen] == ' ' || p[flen] == 0))
			return 1;
	return 0;
}

/* Load one module file; returns 0 or an errno value. */
static int load_module(const char *name)
{
	char path[256];
	int fd, err = 0;

	if (snprintf(path, sizeof(path), MODULE_DIR "/%s", name) >=
	    (int)sizeof(path))
		return ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST)
		err = errno;
	close(fd);
	return err;
}

/* The modules in MODULE_DIR/order, in that order; one report line. */
static void load_modules(void)
{
	char order[1024], loaded[1024] = "", failed[1024] = "";
	char *name, *save = NULL;
	ssize_t n = -1;
	int fd = open(MODULE_DIR "/order", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return; /* an initramfs without modules */
	n = read(fd, order, sizeof(order) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	order[n] = 0;
	for (name = strtok_r(order, "\n", &save); name;
	     name = strtok_r(NULL, "\n", &save)) {
		int err = load_module(name);
		char *list = err ? failed : loaded;
		size_t used = strlen(list);

		/* No spaces: the e2e scripts split these lines on them. */
		if (err)
			snprintf(list + used, sizeof(failed) - used,
				 "%s%s:errno%d", used ? "," : "", name, err);
		else
			snprintf(list + used, sizeof(loaded) - used, "%s%s",
				 used ? "," : "", name);
	}
	printf("E2E-GUEST modules loaded=%s failed=%s\n", loaded, failed);
}

/* The pvpanic events the driver found ("3"), or "0" with no driver. */
static void pvpanic_capability(char *out, size_t size)
{
	glob_t g;

	snprintf(out, size, "0");
	if (glob("/sys/bus/platform/drivers/pvpanic-mmio/*/capability", 0, NULL,
		 &g))
		return;
	if (g.gl_pathc)
		read_file(g.gl_pathv[0], out, size);
	globfree(&g);
}

static void report_platform(void)
{
	char clocksource[64], pvpanic[16];

	read_file("/sys/devices/system/clocksource/clocksource0/"
		  "current_clocksource",
		  clocksource, sizeof(clocksource));
	pvpanic_capability(pvpanic, sizeof(pvpanic));
	printf("E2E-GUEST platform hypervisor=%d tsc_deadline=%d "
	       "clocksource=%s rtc=%d i8042=%d pvpanic=%s\n",
	       cpu_has_flag("hypervisor"), cpu_has_flag("tsc_deadline_timer"),
	       clocksource[0] ? clocksource : "(none)",
	       path_exists("/sys/class/rtc/rtc0"),
	       path_exists("/sys/bus/serio/devices/serio0"),
	       pvpanic[0] ? pvpanic : "0");
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

	load_modules();
	report_platform();

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
