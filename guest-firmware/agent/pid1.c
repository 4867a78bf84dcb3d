// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the agent does as PID 1 before it serves (docs/agent.md, "As PID
 * 1"): the pseudo file systems, the kernel modules it was packed with, the
 * hostname, lo, the network interfaces and the root file system the
 * kernel command line asks for; and at the end, the power-off.
 *
 * The kernel command line is the host's word here (hintvm writes it), but
 * it is still parsed with bounds: keys are matched exactly, values copied
 * into fixed buffers and refused when too long.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

/* Where `hintvm initramfs` puts the modules and their load order. */
#define MODULE_DIR "/lib/modules/hintvm-agent"
#define NEWROOT "/newroot"
#define MAX_NETS 8
#define CMDLINE_MAX 4096
#define MAX_LAZY_SHARES 8
#define TASK_CGROUP_MNT "/sys/fs/cgroup"

/*
 * hintvm.share=TAG:DIR: a share mounted on DIR only when the first EXEC
 * whose ROOT lies under DIR asks for it (agent_lazy_share_mount). A VM
 * template's guest boots with the share's device but sends it nothing,
 * so the template can be snapshotted (docs/snapshot.md, "Shares"), and
 * each clone mounts the directory its host named for the tag.
 */
static struct lazy_share {
	char tag[65];
	char dir[192];
	bool mounted;
} lazy_shares[MAX_LAZY_SHARES];
static unsigned int nr_lazy_shares;

struct boot_args {
	char root[256]; /* /dev/vda, 9p:TAG, or "" */
	char rootfstype[32];
	char hostname[65];
	bool overlay; /* default true */
	char net[MAX_NETS][128];
	unsigned int nr_nets;
	bool task_cgroup; /* hintvm.task-cgroup=1 */
};

static void mount_or_log(const char *src, const char *dst, const char *type,
			 unsigned long flags, const char *data)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, flags, data) < 0 && errno != EBUSY)
		agent_log("mount %s on %s: %s", type, dst, strerror(errno));
}

static void copy_value(char *dst, size_t size, const char *key,
		       const char *value)
{
	if (strlen(value) >= size) {
		agent_log("%s: value too long, ignored", key);
		return;
	}
	strcpy(dst, value);
}

/* TAG:DIR, DIR absolute without "..": else logged and ignored. */
static void add_lazy_share(const char *v)
{
	const char *colon = strchr(v, ':');
	struct lazy_share *ls = &lazy_shares[nr_lazy_shares];
	size_t tag_len = colon ? (size_t)(colon - v) : 0;

	if (nr_lazy_shares == MAX_LAZY_SHARES || !colon || tag_len == 0 ||
	    tag_len >= sizeof(ls->tag) || colon[1] != '/' ||
	    strlen(colon + 1) >= sizeof(ls->dir) || strstr(colon, "..")) {
		agent_log("hintvm.share=%s: expected TAG:/DIR (at most %d)", v,
			  MAX_LAZY_SHARES);
		return;
	}
	memcpy(ls->tag, v, tag_len);
	ls->tag[tag_len] = '\0';
	strcpy(ls->dir, colon + 1);
	nr_lazy_shares++;
}

int agent_lazy_share_mount(const char *root)
{
	for (unsigned int i = 0; i < nr_lazy_shares; i++) {
		struct lazy_share *ls = &lazy_shares[i];
		size_t n = strlen(ls->dir);

		if (ls->mounted || strncmp(root, ls->dir, n) ||
		    (root[n] != '/' && root[n] != '\0'))
			continue;
		if (mkdir(ls->dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		/* No cache: what the host mounts under it later shows. */
		if (mount(ls->tag, ls->dir, "9p", MS_NOSUID | MS_NODEV,
			  "trans=virtio,version=9p2000.L,msize=262144") < 0) {
			int err = errno;

			agent_log("share %s on %s: %s", ls->tag, ls->dir,
				  strerror(err));
			return -err;
		}
		ls->mounted = true;
	}
	return 0;
}

static void parse_cmdline(struct boot_args *args)
{
	char buf[CMDLINE_MAX], *save = NULL, *tok;
	ssize_t n = -1;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');
		const char *v;

		if (strncmp(tok, "hintvm.", 7) || !eq)
			continue;
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(tok, "hintvm.root"))
			copy_value(args->root, sizeof(args->root), tok, v);
		else if (!strcmp(tok, "hintvm.rootfstype"))
			copy_value(args->rootfstype, sizeof(args->rootfstype),
				   tok, v);
		else if (!strcmp(tok, "hintvm.hostname"))
			copy_value(args->hostname, sizeof(args->hostname), tok,
				   v);
		else if (!strcmp(tok, "hintvm.overlay"))
			args->overlay = strcmp(v, "0") != 0;
		else if (!strcmp(tok, "hintvm.debug"))
			agent_debug = strcmp(v, "0") != 0;
		else if (!strcmp(tok, "hintvm.share"))
			add_lazy_share(v);
		else if (!strcmp(tok, "hintvm.task-cgroup"))
			args->task_cgroup = strcmp(v, "0") != 0;
		else if (!strcmp(tok, "hintvm.net")) {
			if (args->nr_nets < MAX_NETS)
				copy_value(args->net[args->nr_nets++],
					   sizeof(args->net[0]), tok, v);
			else
				agent_log("more than %d hintvm.net", MAX_NETS);
		}
	}
}

/* Load every module listed in MODULE_DIR/order, in that order. */
static void load_modules(void)
{
	char line[256], path[512];
	unsigned int loaded = 0, failed = 0;
	FILE *order = fopen(MODULE_DIR "/order", "re");

	if (!order)
		return;
	while (fgets(line, sizeof(line), order)) {
		int fd;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || strchr(line, '/') || line[0] == '.')
			continue;
		snprintf(path, sizeof(path), MODULE_DIR "/%s", line);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) < 0 &&
			       errno != EEXIST)) {
			agent_log("module %s: %s", line, strerror(errno));
			failed++;
		} else {
			loaded++;
		}
		if (fd >= 0)
			close(fd);
	}
	fclose(order);
	if (agent_debug)
		agent_log("%u modules loaded, %u failed", loaded, failed);
}

/* Block devices appear after their driver probes: wait a little. */
static int wait_for(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 500; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -ENOENT;
}

static int mount_lower(const struct boot_args *args, const char *dir,
		       unsigned long flags)
{
	static const char *const guesses[] = { "ext4", "erofs", "squashfs",
					       "xfs",  "btrfs", NULL };

	mkdir(dir, 0755);
	if (!strncmp(args->root, "9p:", 3)) {
		return mount(
			args->root + 3, dir, "9p", flags,
			"trans=virtio,version=9p2000.L,cache=loose,msize=262144");
	}
	if (wait_for(args->root) < 0) {
		agent_log("root %s never appeared", args->root);
		return -1;
	}
	if (args->rootfstype[0])
		return mount(args->root, dir, args->rootfstype, flags, NULL);
	for (const char *const *t = guesses; *t; t++)
		if (mount(args->root, dir, *t, flags, NULL) == 0)
			return 0;
	return -1;
}

/*
 * Mount the root the command line names at NEWROOT: read-only, under an
 * overlay whose upper layer is a tmpfs (so the guest may write and the
 * image stays as it was), or read-write as it is with hintvm.overlay=0.
 */
static int mount_root(const struct boot_args *args)
{
	if (!args->overlay)
		return mount_lower(args, NEWROOT, 0);
	if (mount_lower(args, "/lower", MS_RDONLY) < 0)
		return -1;
	mount_or_log("tmpfs", "/rw", "tmpfs", 0, "mode=0755");
	mkdir("/rw/upper", 0755);
	mkdir("/rw/work", 0755);
	mkdir(NEWROOT, 0755);
	return mount("overlay", NEWROOT, "overlay", 0,
		     "lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work");
}

/* Move the pseudo file systems into NEWROOT and make it "/". */
static int switch_root(void)
{
	static const char *const moved[] = { "/proc", "/sys", "/dev",
					     "/run",  "/tmp", NULL };
	char dst[64];

	for (const char *const *m = moved; *m; m++) {
		snprintf(dst, sizeof(dst), NEWROOT "%s", *m);
		mkdir(dst, 0755);
		if (mount(*m, dst, NULL, MS_MOVE, NULL) < 0)
			agent_log("move %s: %s", *m, strerror(errno));
	}
	if (chdir(NEWROOT) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 ||
	    chroot(".") < 0 || chdir("/") < 0) {
		agent_log("switching to the new root: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int agent_pid1_setup(struct agent_boot *boot)
{
	struct boot_args args = { .overlay = true };

	mount_or_log("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL);
	mount_or_log("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL);
	mount_or_log("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	mount_or_log("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		     "gid=5,mode=620,ptmxmode=666");
	mount_or_log("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		     "mode=1777");
	mount_or_log("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV,
		     "mode=0755");
	mount_or_log("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
		     "mode=1777");
	parse_cmdline(&args);
	boot->debug = agent_debug;
	load_modules();
	if (sethostname(args.hostname[0] ? args.hostname : "hintvm",
			strlen(args.hostname[0] ? args.hostname : "hintvm")) <
	    0)
		agent_log("sethostname: %s", strerror(errno));
	if (agent_net_up("lo") < 0)
		agent_log("lo: %s", strerror(errno));
	for (unsigned int i = 0; i < args.nr_nets; i++)
		if (agent_net_configure(args.net[i]) < 0)
			agent_log("hintvm.net=%s failed", args.net[i]);
	/*
	 * The task cgroup oci-init makes otherwise (its pod containers'
	 * cgroups go beside it, STATS reads it): for a VM whose agent is
	 * PID 1 and runs the containers itself, a template's clone.
	 */
	if (args.task_cgroup) {
		int dir = agent_task_cgroup_setup(TASK_CGROUP_MNT);
		char fd[16];

		if (dir < 0) {
			agent_log("task cgroup: %s", strerror(-dir));
		} else {
			snprintf(fd, sizeof(fd), "%d", dir);
			setenv(AGENT_TASK_CGROUP_ENV, fd, 1);
		}
	}
	if (args.root[0]) {
		if (mount_root(&args) < 0) {
			agent_log("root %s: %s", args.root, strerror(errno));
			return -1;
		}
		if (switch_root() < 0)
			return -1;
	}
	return 0;
}

/*
 * The kernel's own splitting (lib/cmdline.c next_arg): words at spaces,
 * "..." keeps spaces inside a word; everything after a bare "--" is
 * init's.
 */
int agent_cmdline_init_argc(void)
{
	char buf[CMDLINE_MAX];
	bool in_quote = false, after = false;
	int words_after = 0;
	ssize_t n = -1;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (char *p = buf; *p;) {
		char *start;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		start = p;
		for (; *p &&
		       (in_quote || (*p != ' ' && *p != '\t' && *p != '\n'));
		     p++)
			if (*p == '"')
				in_quote = !in_quote;
		if (after)
			words_after++;
		else if (p - start == 2 && !strncmp(start, "--", 2))
			after = true;
	}
	return words_after;
}

void agent_pid1_poweroff(void)
{
	sync();
	reboot(RB_POWER_OFF);
	/* Still here: nothing else can be done; PID 1 must not exit. */
	for (;;)
		pause();
}
