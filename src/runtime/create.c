// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * create: build the container's VM in a new process, the VMM process,
 * whose pid goes to --pid-file and whose exit status is the container's.
 *
 *   create (this process)            VMM process (child)
 *   parse config.json, state dir
 *   fork ----------------------->    join cgroupsPath, hvm_vm_create()
 *   wait on the ready pipe  <-----   "ok" (or the error text)
 *   state.json, --pid-file, exit 0   open(exec.fifo, O_WRONLY): blocks
 *                                    ... until `start` opens it to read
 *                                    hvm_vm_start(), hvm_vm_wait()
 *                                    exit(container status)
 *
 * The child is not detached: when create exits it is reparented to the
 * caller's subreaper (the runc shim, conmon), which reaps it and reads the
 * container's exit status from it, as with runc's init process.
 */
#include <errno.h>
#include <seccomp.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "console.h"
#include "container_frame.h"
#include "guest_config.h"
#include "initramfs.h"
#include "seccomp.h"
#include "network.h"
#include "hintvm/hintvm.h"
#include "spec.h"
#include "state.h"

struct create_opts {
	const char *bundle;
	const char *pid_file;
	const char *console_socket;
	unsigned int preserve_fds;
	const char *id;
};

static int read_file(const char *path, char **text, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size > OCI_MAX_CONFIG) {
		close(fd);
		return -EFBIG;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, *text, (size_t)st.st_size);
	close(fd);
	if (n != st.st_size) {
		free(*text);
		return -EIO;
	}
	(*text)[n] = '\0';
	*len = (size_t)n;
	return 0;
}

static int write_file(const char *path, const char *text, size_t len,
		      mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	bool ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -EIO;
}

/* hvm_config_set with the reason logged on failure. */
static int set_option(struct hvm_config *cfg, const char *key,
		      const char *value, const char *from)
{
	if (hvm_config_set(cfg, key, value)) {
		rt_error("%s: %s", from, hvm_last_error());
		return -EINVAL;
	}
	return 0;
}

/*
 * linux.seccomp -> BPF (seccomp.c), for oci-init (in the container frame)
 * and for exec (the state directory's seccomp.bpf, which exec hands the
 * agent). No profile: *PROG stays NULL.
 */
static int compile_seccomp(const struct oci_spec *spec,
			   const struct rt_container *c, void **prog,
			   size_t *len)
{
	char unknown[512], err[512], path[PATH_MAX + 32];
	size_t nunknown;
	FILE *f;
	int ret;

	*prog = NULL;
	*len = 0;
	if (!spec->seccomp.present)
		return 0;
	ret = rt_seccomp_compile(&spec->seccomp, prog, len, unknown,
				 sizeof(unknown), &nunknown, err, sizeof(err));
	if (ret) {
		rt_error("%s", err);
		return ret;
	}
	/* As runc: names this libseccomp does not know are left out. */
	if (nunknown)
		rt_warn("linux.seccomp: %zu syscall names unknown to libseccomp %u.%u ignored: %s",
			nunknown, seccomp_version()->major,
			seccomp_version()->minor, unknown);
	rt_container_path(c, "seccomp.bpf", path, sizeof(path));
	f = fopen(path, "we");
	if (!f || fwrite(*prog, 1, *len, f) != *len) {
		ret = -errno;
		rt_error("%s: %s", path, strerror(errno));
	}
	if (f && fclose(f) && !ret)
		ret = -EIO;
	return ret;
}

/*
 * Console mode's guest: the root as a read-only 9p share (the guest puts
 * an overlay on tmpfs over it) or copied into the initramfs; bind mounts
 * of directories as shares, of files copied in (a snapshot); what the
 * guest init runs as the CONTAINER frame (container_frame.h).
 */
static int console_guest(struct hvm_config *cfg,
			 const struct rt_guest_config *g,
			 const struct oci_spec *spec,
			 const struct rt_container *c, const char *rootfs,
			 const char *initrd)
{
	struct rt_initramfs_extra x = { .nmounts = spec->nmounts };
	char nic[64];
	const char *base;
	char kind[OCI_MAX_MOUNTS] = { 0 }, err[512], share[PATH_MAX * 2 + 64];
	const char *src[OCI_MAX_MOUNTS] = { 0 };
	bool root_share = g->rootfs_share;
	unsigned int shares = (root_share ? 1 : 0) + (spec->has_netns ? 1 : 0);
	void *seccomp = NULL;
	uint8_t *frame = NULL;
	size_t seccomp_len = 0, frame_len = 0;
	int ret;

	if (root_share) {
		snprintf(share, sizeof(share), "%s,tag=rootfs,ro", rootfs);
		if (set_option(cfg, "share", share, "root.path"))
			return -EINVAL;
	}
	for (size_t i = 0; i < spec->nmounts; i++) {
		const struct oci_mount *m = &spec->mounts[i];
		struct stat st;

		if (!m->bind || !m->source)
			continue;
		if (stat(m->source, &st)) {
			rt_error("mounts[%zu] source %s: %s", i, m->source,
				 strerror(errno));
			return -ENOENT;
		}
		if (S_ISREG(st.st_mode)) {
			kind[i] = 'f';
			src[i] = m->source;
		} else if (S_ISDIR(st.st_mode) && shares < RT_MAX_SHARES) {
			snprintf(share, sizeof(share), "%s,tag=m%zu%s",
				 m->source, i, m->readonly ? ",ro" : "");
			if (set_option(cfg, "share", share, m->destination))
				return -EINVAL;
			kind[i] = 's';
			shares++;
		} else {
			rt_warn("mounts[%zu] %s: %s", i, m->destination,
				S_ISDIR(st.st_mode)
					? "too many shared directories: not mounted"
					: "neither a file nor a directory: not mounted");
		}
	}
	/*
	 * A network namespace in config.json: the VM gets a NIC on a tap
	 * the VMM process makes there (vmm_main), and a share "hvmcfg" of
	 * the state directory's guest/ through which start hands the guest
	 * the veth's settings (the engine may fill the namespace only after
	 * create: ctr --cni does).
	 */
	if (spec->has_netns) {
		char cfgdir[PATH_MAX + 16];

		rt_container_path(c, "guest", cfgdir, sizeof(cfgdir));
		if (mkdir(cfgdir, 0700) && errno != EEXIST)
			return -errno;
		snprintf(share, sizeof(share), "%s,tag=hvmcfg,ro", cfgdir);
		snprintf(nic, sizeof(nic), "tap=%s", RT_TAP_NAME);
		if (set_option(cfg, "share", share, "network") ||
		    set_option(cfg, "net", nic, "network"))
			return -EINVAL;
		x.net_share = true;
	}
	x.rootfs = root_share ? NULL : rootfs;
	x.mount_kind = kind;
	x.mount_src = src;
	/*
	 * The base: the guest agent's initramfs for this kernel (the agent
	 * and the modules for virtio, vsock, 9p, overlay, net), cached by
	 * libhintvm; or the file the configuration names; or nothing.
	 */
	base = g->initrd;
	if (!base || !strcmp(base, "agent")) {
		/*
		 * libhintvm's option agent: it puts the cached archive
		 * before ours and takes the guest's exit report on vsock
		 * port 1025, which oci-init sends on every architecture.
		 */
		if (set_option(cfg, "agent", NULL, "initrd = agent"))
			return -EINVAL;
		/*
		 * Without a terminal the process's stdin, stdout and stderr
		 * are the VMM process's own, over vsock (oci-init connects
		 * them): apart, and with an end, which a serial line has
		 * not. The console keeps what the guest kernel says, on
		 * stderr.
		 */
		if (!spec->process.terminal &&
		    (hvm_config_set_agent_stdio_fds(cfg, 0, 1, 2) ||
		     hvm_config_set_console_fds(cfg, -1, 2))) {
			rt_error("agent stdio: %s", hvm_last_error());
			return -EINVAL;
		}
		base = NULL;
	} else if (!strcmp(base, "none")) {
		base = NULL;
	}
	ret = compile_seccomp(spec, c, &seccomp, &seccomp_len);
	if (ret)
		return ret;
	ret = rt_container_frame(spec, seccomp, seccomp_len, &frame, &frame_len,
				 err, sizeof(err));
	free(seccomp);
	if (!ret)
		ret = rt_initramfs_write(initrd, base, g->guest_init, frame,
					 frame_len, &x, err, sizeof(err));
	if (ret)
		rt_error("%s", err);
	free(frame);
	return ret;
}

/* A bind mount of a directory: what a clone's guest gets as a share. */
static bool is_dir_bind(const struct oci_mount *m)
{
	struct stat st;

	return m->bind && m->source && !stat(m->source, &st) &&
	       S_ISDIR(st.st_mode);
}

/* Volumes, which a plain task's clone lacks. */
static bool has_dir_binds(const struct oci_spec *spec)
{
	for (size_t i = 0; i < spec->nmounts; i++)
		if (is_dir_bind(&spec->mounts[i]))
			return true;
	return false;
}

static bool is_sandbox(const struct oci_spec *spec)
{
	const char *type =
		oci_spec_annotation(spec, "io.kubernetes.cri.container-type");

	return type && !strcmp(type, "sandbox");
}

/*
 * Whether this container's VM starts from a template: the node owner
 * said template = auto, the guest is a Linux kernel with the agent's
 * initramfs, and the container is one a clone can run (docs/template.md,
 * "Containers and pods"): a CRI pod's sandbox, which runs no process of
 * its own in the guest (its app containers are execs whose roots come
 * through the pod's share); or a plain container without bind-mounted
 * directories (volumes), whose process the agent runs in its rootfs
 * share. A NIC is no part of a template yet: a network namespace at a
 * path (which an engine fills with a veth) boots; a new one config.json
 * names no path for has only lo, as the clone's guest. Nor is a
 * terminal; arm64 has no snapshots: those boot.
 */
static bool from_template(const struct rt_guest_config *g,
			  const struct oci_spec *spec)
{
#if defined(__x86_64__)
	const bool arch_snapshots = true;
#else
	const bool arch_snapshots = false; /* arm64 has no snapshots yet */
#endif
	return arch_snapshots && g->template_auto && g->kernel &&
	       strcmp(g->kernel, "builtin") &&
	       (!g->initrd || !strcmp(g->initrd, "agent")) &&
	       (!spec->has_netns || !spec->netns_path) &&
	       !spec->process.terminal &&
	       (is_sandbox(spec) || !has_dir_binds(spec));
}

/*
 * A clone's guest (docs/template.md, "Containers and pods"): the agent as
 * PID 1 with a task cgroup, each bind-mounted directory a share the
 * agent mounts on its destination only when the first exec under it
 * asks (hintvm.share=TAG:DIR), so the template's guest never uses one
 * and the clone's host names its own. Bind-mounted files are not copied
 * in (no initramfs of the container's): logged.
 */
static int template_guest(struct hvm_config *cfg,
			  const struct rt_guest_config *g,
			  const struct oci_spec *spec,
			  const struct rt_container *c)
{
	char share[PATH_MAX * 2 + 64], vsock[PATH_MAX + 32];
	char cmdline[4096];
	size_t used;
	unsigned int shares = 0;

	used = (size_t)snprintf(
		cmdline, sizeof(cmdline),
		"console=ttyS0 quiet loglevel=0 panic=-1 hintvm.task-cgroup=1");
	for (size_t i = 0; i < spec->nmounts; i++) {
		const struct oci_mount *m = &spec->mounts[i];
		int n;

		if (!m->bind || !m->source)
			continue;
		if (!is_dir_bind(m) || shares == RT_MAX_SHARES ||
		    strchr(m->destination, ' ')) {
			rt_warn("mounts[%zu] %s: not mounted in a VM started from a template (only directories are shared)",
				i, m->destination);
			continue;
		}
		snprintf(share, sizeof(share), "%s,tag=m%zu%s", m->source, i,
			 m->readonly ? ",ro" : "");
		n = snprintf(cmdline + used, sizeof(cmdline) - used,
			     " hintvm.share=m%zu:%s", i, m->destination);
		if (n < 0 || (size_t)n >= sizeof(cmdline) - used) {
			rt_error(
				"mounts[%zu] %s: the kernel command line is full",
				i, m->destination);
			return -E2BIG;
		}
		used += (size_t)n;
		if (set_option(cfg, "share", share, m->destination))
			return -EINVAL;
		shares++;
	}
	/*
	 * A plain container: its process runs in its rootfs, shared as it
	 * is (read-only with root.readonly; its writes reach the rootfs, as
	 * under runc), mounted by the agent on its first EXEC.
	 */
	if (!is_sandbox(spec)) {
		char path[PATH_MAX + 32];
		void *bpf = NULL;
		size_t bpf_len = 0;
		int n, r;

		if (!spec->root_path) {
			rt_error("config.json has no root.path");
			return -EINVAL;
		}
		snprintf(share, sizeof(share), "%s%s%s,tag=root%s",
			 spec->root_path[0] == '/' ? "" : c->bundle,
			 spec->root_path[0] == '/' ? "" : "/", spec->root_path,
			 spec->root_readonly ? ",ro" : "");
		n = snprintf(cmdline + used, sizeof(cmdline) - used,
			     " hintvm.share=root:" RT_CLONE_ROOT);
		if (n < 0 || (size_t)n >= sizeof(cmdline) - used)
			return -E2BIG;
		used += (size_t)n;
		if (set_option(cfg, "share", share, "root.path"))
			return -EINVAL;
		rt_container_path(c, RT_GUEST_ROOT_FILE, path, sizeof(path));
		r = write_file(path, RT_CLONE_ROOT, strlen(RT_CLONE_ROOT),
			       0600);
		/* The agent applies it to the process: seccomp.bpf. */
		if (!r)
			r = compile_seccomp(spec, c, &bpf, &bpf_len);
		free(bpf);
		if (r)
			return r;
	}
	if (g->cmdline)
		snprintf(cmdline + used, sizeof(cmdline) - used, " %s",
			 g->cmdline);
	rt_container_path(c, RT_VSOCK_FILE, vsock, sizeof(vsock));
	snprintf(share, sizeof(share), "cid=3,uds=%s", vsock);
	if (set_option(cfg, "agent", NULL, "template = auto") ||
	    set_option(cfg, "vsock", share, "vsock") ||
	    set_option(cfg, "cmdline", cmdline, "cmdline"))
		return -EINVAL;
	/* The guest kernel's words, as a booted VM's, on stderr. */
	if (hvm_config_set_console_fds(cfg, -1, 2)) {
		rt_error("console: %s", hvm_last_error());
		return -EINVAL;
	}
	return 0;
}

/*
 * The clone's template, made here on first use (by root, in the store
 * root owns; outside the container's cgroup, which is sized for one VM):
 * CFG's key, found in the store or made. A store without it is listed
 * first, which removes the templates whose key can no longer match (a
 * kernel replaced, another hintvm), so a node keeps only live ones. The
 * VMM process then restores that key: a create never boots twice.
 */
static int template_prepare(struct hvm_config *cfg,
			    const struct rt_guest_config *g)
{
	char def[PATH_MAX], key[65];
	const char *dir = NULL;
	struct hvm_template *list = NULL;
	size_t n = 0;
	bool found = false;

	for (size_t i = 0; i < g->noptions; i++)
		if (!strcmp(g->options[i].key, "template-dir"))
			dir = g->options[i].value;
	if (!dir) {
		if (hvm_template_dir(def, sizeof(def))) {
			rt_error("template store: %s", hvm_last_error());
			return -EINVAL;
		}
		dir = def;
	}
	if (hvm_template_key(cfg, key)) {
		rt_error("template: %s", hvm_last_error());
		return -EINVAL;
	}
	if (hvm_template_list(dir, &list, &n)) {
		rt_error("template store %s: %s", dir, hvm_last_error());
		return -EPERM;
	}
	for (size_t i = 0; i < n; i++) {
		if (list[i].removed)
			rt_debug("template %s removed: %s", list[i].key,
				 list[i].problem);
		else if (!strcmp(list[i].key, key) && !list[i].problem[0])
			found = true;
	}
	hvm_template_list_free(list, n);
	if (!found) {
		rt_debug("template %s: making it (first use)", key);
		if (hvm_template_make(cfg, dir, 0, key) < 0) {
			rt_error("cannot make the VM template: %s",
				 hvm_last_error());
			return -EIO;
		}
	}
	if (set_option(cfg, "template-dir", dir, "template store") ||
	    set_option(cfg, "template", key, "template = auto"))
		return -EINVAL;
	return 0;
}

/* config.json + runtime configuration -> the VM's hintvm options. */
static int build_vm_config(struct hvm_config *cfg,
			   const struct rt_guest_config *g,
			   const struct oci_spec *spec,
			   const struct rt_container *c, bool *clone)
{
	struct rt_vm_resources res;
	char err[512], num[32], control[PATH_MAX + 16];
	long host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ret;

	if (g->kernel && strcmp(g->kernel, "builtin")) {
		if (access(g->kernel, R_OK)) {
			rt_error("guest kernel %s: %s (set kernel = in %s)",
				 g->kernel, strerror(errno), rt.config_path);
			return -ENOENT;
		}
		if (set_option(cfg, "kernel", g->kernel, "kernel"))
			return -EINVAL;
	}
	*clone = from_template(g, spec);
	if (*clone) {
		ret = template_guest(cfg, g, spec, c);
		if (ret)
			return ret;
	} else if (g->kernel && strcmp(g->kernel, "builtin")) {
		/*
		 * Console mode: the container's root and what its init runs
		 * (the CONTAINER frame) travel in an initramfs of its own, the process's stdio is the
		 * serial console, its exit status comes back through the
		 * debug-exit port (guest-firmware/oci/oci-init.c).
		 */
		char initrd[PATH_MAX + 32], rootfs[PATH_MAX * 2],
			cmdline[PATH_MAX + 64];
		char vsock[PATH_MAX + 32];

		rt_container_path(c, "initramfs.cpio", initrd, sizeof(initrd));
		if (!spec->root_path) {
			rt_error("config.json has no root.path");
			return -EINVAL;
		}
		snprintf(rootfs, sizeof(rootfs), "%s%s%s",
			 spec->root_path[0] == '/' ? "" : c->bundle,
			 spec->root_path[0] == '/' ? "" : "/", spec->root_path);
		ret = console_guest(cfg, g, spec, c, rootfs, initrd);
		if (ret)
			return ret;
		/* The agent oci-init starts serves exec over vsock. */
		rt_container_path(c, RT_VSOCK_FILE, vsock, sizeof(vsock));
		snprintf(cmdline, sizeof(cmdline), "cid=3,uds=%s", vsock);
		if (set_option(cfg, "vsock", cmdline, "vsock"))
			return -EINVAL;
		snprintf(
			cmdline, sizeof(cmdline),
			"console=ttyS0 quiet loglevel=0 panic=-1 rdinit=/hintvm/oci-init %s",
			g->cmdline ? g->cmdline : "");
		if (set_option(cfg, "initrd", initrd, "initramfs") ||
		    set_option(cfg, "cmdline", cmdline, "cmdline"))
			return -EINVAL;
	} else {
		if (g->initrd && set_option(cfg, "initrd", g->initrd, "initrd"))
			return -EINVAL;
		if (g->cmdline &&
		    set_option(cfg, "cmdline", g->cmdline, "cmdline"))
			return -EINVAL;
	}
	/*
	 * The library's default is no sandbox (it never confines an
	 * embedder's threads on its own initiative); the runtime is not an
	 * embedder but a VMM for untrusted images, so it asks for hintvm's
	 * sandbox like `hintvm run` does. The node owner can say
	 * `sandbox = off` below; pods cannot (not an annotation by default).
	 */
	if (set_option(cfg, "sandbox", "auto", "the runtime's default"))
		return -EINVAL;
	/*
	 * And, run by root as containerd and podman run it, its VM's threads
	 * are a uid of their own after setup, with the rootfs share served
	 * by a file-server process (docs/sandbox.md).
	 */
	if (set_option(cfg, "user", "auto", "the runtime's default"))
		return -EINVAL;
	for (size_t i = 0; i < g->noptions; i++)
		if (set_option(cfg, g->options[i].key, g->options[i].value,
			       rt.config_path))
			return -EINVAL;

	ret = rt_map_resources(g, &spec->resources,
			       host_cpus > 0 ? (unsigned int)host_cpus : 1,
			       &res, err, sizeof(err));
	if (ret) {
		rt_error("%s", err);
		return ret;
	}
	snprintf(num, sizeof(num), "%u", res.cpus);
	if (set_option(cfg, "cpus", num, "linux.resources.cpu"))
		return -EINVAL;
	snprintf(num, sizeof(num), "%lluM", (unsigned long long)res.mem_mib);
	if (set_option(cfg, "mem", num, "linux.resources.memory"))
		return -EINVAL;
	if (res.pin[0] &&
	    set_option(cfg, "pin", res.pin, "linux.resources.cpu.cpus"))
		return -EINVAL;

	/* io.hintvm.OPTION annotations, through the one option table. */
	for (size_t i = 0; i < spec->nannotations; i++) {
		const char *key = spec->annotations[i].key;

		if (strncmp(key, "io.hintvm.", 10))
			continue;
		key += 10;
		if (!rt_annotation_allowed(g, key)) {
			rt_error(
				"annotation io.hintvm.%s: pods may not set %s (annotations = in %s)",
				key, key, rt.config_path);
			return -EPERM;
		}
		if (set_option(cfg, key, spec->annotations[i].value,
			       spec->annotations[i].key))
			return -EINVAL;
	}

	/* The VM's control socket lives and dies with the state dir. */
	rt_container_path(c, "control.sock", control, sizeof(control));
	return set_option(cfg, "control", control, "control");
}

/* Log what config.json asks for that hintvm does not do. */
static void log_spec_warnings(const struct oci_spec *spec,
			      const struct rt_guest_config *g)
{
	for (size_t i = 0; i < spec->nwarnings; i++)
		rt_warn("%s", spec->warnings[i]);
	if (spec->warnings_dropped)
		rt_warn("%zu more warnings about config.json not shown",
			spec->warnings_dropped);
	if (g->kernel && !strcmp(g->kernel, "builtin"))
		rt_warn("kernel = builtin: the VM runs hintvm's test kernel, not process.args (tests only)");
}

/*
 * The VMM process's signals: blocked from the start and read from a
 * signalfd by a thread, so that a signal never interrupts hintvm halfway.
 * A signal `kill` sends goes to the container's main process in the guest
 * (oci-init forwards it); when the guest cannot take it (still booting,
 * the test kernel) the VM ends and the exit status is 128+N, as a shell
 * reports a process killed by it. SIGKILL ends the VMM process itself.
 */
struct vmm_signals {
	int fd;
	struct hvm_vm *vm;
	volatile sig_atomic_t last;
	pthread_t thread;
	bool guest_listens; /* oci-init serves signals on vsock port 1026 */
	/*
	 * A template's clone running a container: the process's runner
	 * (task_runner) reads the signals from this pipe, else -1.
	 */
	int forward_fd;
};

/*
 * Deliver SIG to the container's main process: oci-init listens on vsock
 * port 1026 of the guest for one byte, the signal number. The hybrid
 * socket's handshake: "CONNECT 1026\n", then "OK <port>\n".
 */
static int deliver_to_guest(struct hvm_vm *vm, int sig)
{
	char reply[32] = { 0 }, byte = (char)sig;
	struct pollfd pfd;
	int s, ok = -1;

	/*
	 * In-process: this thread is the VM's --user by now, which may not
	 * reach v.sock (RT_VSOCK_FILE) in root's state directory.
	 */
	s = hvm_vm_vsock_connect(vm);
	if (s < 0)
		return -1;
	if (write(s, "CONNECT 1026\n", 13) == 13) {
		pfd = (struct pollfd){ .fd = s, .events = POLLIN };
		if (poll(&pfd, 1, 2000) == 1 &&
		    read(s, reply, sizeof(reply) - 1) > 0 &&
		    !strncmp(reply, "OK ", 3) && write(s, &byte, 1) == 1)
			ok = 0;
	}
	close(s);
	return ok;
}

static void *vmm_signal_thread(void *arg)
{
	struct vmm_signals *s = arg;
	struct signalfd_siginfo info;

	/* No thread of the VMM process stays root (docs/sandbox.md). */
	if (hvm_vm_become_user(s->vm) < 0) {
		rt_error("the signal thread: %s", hvm_last_error());
		_exit(HVM_STATUS_HOST_ERROR);
	}
	while (read(s->fd, &info, sizeof(info)) == sizeof(info)) {
		if (info.ssi_signo == SIGCHLD || info.ssi_signo == SIGWINCH)
			continue;
		if (s->forward_fd >= 0 &&
		    write(s->forward_fd, &info, sizeof(info)) ==
			    (ssize_t)sizeof(info))
			continue;
		/* Into the guest when it listens; else the VM ends. */
		if (s->guest_listens &&
		    !deliver_to_guest(s->vm, (int)info.ssi_signo))
			continue;
		s->last = (sig_atomic_t)info.ssi_signo;
		hvm_vm_stop(s->vm);
	}
	return NULL;
}

static void vmm_block_signals(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGKILL);
	sigdelset(set, SIGSTOP);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGABRT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

/*
 * At start: the engine has set the namespace up by now. Connect its veth
 * to the tap and leave the guest its settings in the hvmcfg share; a
 * failure leaves the guest without a network and says why.
 */
static void connect_network(const struct rt_container *c)
{
	char err[256], line[512], path[PATH_MAX + 32];
	struct rt_net net;
	FILE *f;

	if (rt_net_connect(&net, err, sizeof(err))) {
		rt_error("network: %s", err);
		return;
	}
	if (!net.enabled || rt_net_guest_line(&net, line, sizeof(line)) < 0)
		return;
	rt_container_path(c, "guest/net", path, sizeof(path));
	f = fopen(path, "we");
	if (!f) {
		rt_error("network: %s: %s", path, strerror(errno));
		return;
	}
	fputs(line, f);
	fclose(f);
	rt_debug("network: %s %s/%u gw %s, %u IPv6 (gw %s), mtu %u -> %s",
		 net.veth, net.address, net.prefix, net.gateway, net.nr_v6,
		 net.gateway6, net.mtu, RT_TAP_NAME);
}

/* Tell create how it went: "ok" or the error. */
static void report_ready(int fd, const char *msg)
{
	if (write(fd, msg, strlen(msg)) < 0)
		_exit(1);
	close(fd);
}

/* Wait until `start` opens the exec FIFO (or create's caller dies). */
static int wait_for_start(const struct rt_container *c)
{
	char path[PATH_MAX + 16];
	int fd;

	rt_container_path(c, "exec.fifo", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1) {
		close(fd);
		return -EPIPE;
	}
	close(fd);
	return 0;
}

/*
 * A container in a template's clone: its process is the agent's, not a
 * guest init's, so a process of the VMM process's runs it (the
 * runtime's exec, as `hintvm-runtime exec` does): forked before the VM
 * starts, so it keeps root to reach the agent's socket in root's state
 * directory and holds nothing of the VM; its stdio is the container's.
 * When the process exits it hands the status over STATUS_FD and stops
 * the VM through its control socket. Signals come from the VMM
 * process's signal thread over SIG_FD.
 */
static pid_t task_runner(const struct rt_container *c,
			 const struct oci_spec *spec, int sig_fd, int status_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		char path[PATH_MAX + 16];
		unsigned char st;
		int status, fd;

		prctl(PR_SET_NAME, "hintvm-task");
		status = rt_exec_main_process(c, spec, RT_CLONE_ROOT, sig_fd);
		st = (unsigned char)status;
		if (write(status_fd, &st, 1) != 1)
			_exit(status);
		rt_container_path(c, "control.sock", path, sizeof(path));
		fd = hvm_control_connect(path);
		if (fd >= 0 && dprintf(fd, "stop\n") > 0) {
			char reply[256];

			/* The answer, or the VM gone: either way it ends. */
			if (read(fd, reply, sizeof(reply)) < 0)
				_exit(status);
		}
		_exit(status);
	}
	return pid;
}

static __attribute__((noreturn)) void
vmm_main(struct hvm_config *cfg, const struct rt_container *c,
	 const struct oci_spec *spec, struct rt_console *console,
	 bool guest_has_init, bool clone_task, int ready_fd)
{
	struct vmm_signals sig = { .fd = -1, .forward_fd = -1 };
	int sig_pipe[2] = { -1, -1 }, status_pipe[2] = { -1, -1 };
	bool task_status = false;
	struct hvm_exit ex;
	struct hvm_vm *vm;
	sigset_t set;
	char msg[600], oom_path[PATH_MAX + 16];
	int status, oom_fd;

	prctl(PR_SET_NAME, "hintvm-vmm");
	vmm_block_signals(&set);
	if (spec->cgroups_path &&
	    rt_cgroup_enter(spec->cgroups_path, &spec->resources, msg,
			    sizeof(msg))) {
		report_ready(ready_fd, msg);
		_exit(1);
	}
	if (spec->has_netns &&
	    rt_net_prepare(spec->netns_path, msg, sizeof(msg))) {
		report_ready(ready_fd, msg);
		_exit(1);
	}
	if (console->slave >= 0 &&
	    hvm_config_set_console_fds(cfg, console->slave, console->slave)) {
		snprintf(msg, sizeof(msg), "console: %s", hvm_last_error());
		report_ready(ready_fd, msg);
		_exit(1);
	}
	vm = hvm_vm_create(cfg);
	if (!vm) {
		snprintf(msg, sizeof(msg), "cannot create the VM: %s",
			 hvm_last_error());
		report_ready(ready_fd, msg);
		_exit(1);
	}
	sig.vm = vm;
	sig.guest_listens = guest_has_init;
	if (clone_task) {
		if (pipe2(sig_pipe, O_CLOEXEC) ||
		    pipe2(status_pipe, O_CLOEXEC)) {
			report_ready(ready_fd, "cannot make the task's pipes");
			_exit(1);
		}
		sig.forward_fd = sig_pipe[1];
	}
	sig.fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sig.fd < 0 ||
	    pthread_create(&sig.thread, NULL, vmm_signal_thread, &sig)) {
		report_ready(ready_fd, "cannot watch signals");
		_exit(1);
	}
	report_ready(ready_fd, "ok");

	if (wait_for_start(c)) {
		/* Nobody will ever start it: deleted before start. */
		hvm_vm_destroy(vm);
		_exit(128 + SIGKILL);
	}
	if (sig.last) /* killed between create and start */
		_exit(128 + sig.last);
	if (spec->has_netns)
		connect_network(c);
	rt_log_keep_open();
	/* Opened now: once the VM runs, no thread of ours may open files
	 * in root's state directory (docs/sandbox.md). */
	rt_container_path(c, RT_OOM_FILE, oom_path, sizeof(oom_path));
	oom_fd = open(oom_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (oom_fd < 0)
		rt_warn("%s: %s: an OOM kill will go unreported", oom_path,
			strerror(errno));
	if (clone_task &&
	    task_runner(c, spec, sig_pipe[0], status_pipe[1]) < 0) {
		rt_error("cannot fork the task's runner: %s", strerror(errno));
		_exit(HVM_STATUS_HOST_ERROR);
	}
	if (hvm_vm_start(vm)) {
		rt_error("cannot start the VM: %s", hvm_last_error());
		_exit(HVM_STATUS_HOST_ERROR);
	}
	hvm_vm_wait(vm, &ex);
	status = hvm_exit_status(&ex);
	if (clone_task) {
		unsigned char st;

		/* The runner wrote it before it stopped the VM. */
		close(status_pipe[1]);
		if (fcntl(status_pipe[0], F_SETFL, O_NONBLOCK) == 0 &&
		    read(status_pipe[0], &st, 1) == 1) {
			status = st;
			task_status = true;
		}
	}
	/* Console mode: the guest init wrote the process's status there. */
	if (ex.reason == HVM_EXIT_DEBUG)
		status = (int)(ex.debug_code & 0xff);
	if (ex.reason == HVM_EXIT_STOPPED && sig.last && !task_status)
		status = 128 + sig.last;
	/* Before the exit that lets the reaper read it (RT_OOM_FILE). */
	if (ex.guest_reported && ex.guest_oom_kills != HVM_GUEST_STAT_UNKNOWN &&
	    oom_fd >= 0) {
		if (dprintf(oom_fd, "%llu\n",
			    (unsigned long long)ex.guest_oom_kills) < 0)
			rt_warn("%s: %s", oom_path, strerror(errno));
		if (ex.guest_oom_kills)
			rt_debug(
				"container %s: the guest's OOM killer ended %llu of its processes",
				c->id, (unsigned long long)ex.guest_oom_kills);
	}
	/*
	 * A guest that crashed, reset or met a host error leaves a status
	 * (6, 4, 8) that says nothing by itself, and the guest kernel is
	 * quiet: the engine's log (and so `ctr`'s or podman's message) is
	 * the only place a user learns why.
	 */
	if (ex.reason == HVM_EXIT_CRASH || ex.reason == HVM_EXIT_REBOOT ||
	    ex.reason == HVM_EXIT_HOST_ERROR)
		rt_error("container %s: the VM ended (%s): %s; status %d",
			 c->id, hvm_exit_reason_name(ex.reason), ex.detail,
			 status);
	else
		rt_debug("container %s: VM ended (%s: %s), status %d", c->id,
			 hvm_exit_reason_name(ex.reason), ex.detail, status);
	/* Leave the VM as it is: exiting frees it, and a destroy would wait. */
	_exit(status);
}

static int write_pid_file(const char *path, pid_t pid)
{
	char tmp[PATH_MAX], text[32];
	int n = snprintf(text, sizeof(text), "%d", (int)pid);

	/* Written whole then renamed: a shim polling it never reads half. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.hintvm-tmp", path) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	if (write_file(tmp, text, (size_t)n, 0644) || rename(tmp, path))
		return -errno;
	return 0;
}

static int parse_create_opts(int argc, char **argv, struct create_opts *o)
{
	static const struct option longopts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "console-socket", required_argument, NULL, 'c' },
		{ "preserve-fds", required_argument, NULL, 'f' },
		{ "no-pivot", no_argument, NULL, 'P' },
		{ "no-new-keyring", no_argument, NULL, 'K' },
		{ "detach", no_argument, NULL, 'd' },
		{ "keep", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->bundle = ".";
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+b:d", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			o->bundle = optarg;
			break;
		case 'p':
			o->pid_file = optarg;
			break;
		case 'c':
			o->console_socket = optarg;
			break;
		case 'f':
			o->preserve_fds = (unsigned int)atoi(optarg);
			break;
		case 'P': /* no root to pivot into on the host side */
		case 'K': /* the guest has its own keyrings */
		case 'd':
		case 'k':
			break;
		default:
			rt_error("create: unknown option");
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		rt_error("create: expected one container id");
		return -EINVAL;
	}
	o->id = argv[optind];
	return 0;
}

/* create, and for `run` also start: returns the VMM pid or -errno. */
static pid_t create_container(struct create_opts *o)
{
	struct rt_guest_config g;
	struct oci_spec spec;
	struct rt_container c;
	struct rt_console console = { .slave = -1 };
	struct hvm_config *cfg = NULL;
	char path[PATH_MAX + 16], err[512], bundle[PATH_MAX], buf[600];
	char *text = NULL;
	size_t len = 0;
	int ready[2] = { -1, -1 }, ret;
	bool clone = false;
	ssize_t n;
	pid_t pid = -1;

	memset(&spec, 0, sizeof(spec));
	ret = rt_guest_config_load(&g, rt.config_path, err, sizeof(err));
	if (ret) {
		rt_error("runtime configuration: %s", err);
		return ret;
	}
	if (!realpath(o->bundle, bundle)) {
		rt_error("bundle %s: %s", o->bundle, strerror(errno));
		ret = -errno;
		goto out_free;
	}
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	ret = read_file(path, &text, &len);
	if (ret) {
		rt_error("%s: %s", path, strerror(-ret));
		goto out_free;
	}
	ret = oci_spec_parse(text, len, &spec, err, sizeof(err));
	if (ret) {
		rt_error("%s: %s", path, err);
		goto out_free;
	}
	if (!spec.has_process) {
		rt_error("%s: no process to run", path);
		ret = -EINVAL;
		goto out_free;
	}
	log_spec_warnings(&spec, &g);

	ret = rt_container_init(&c, o->id, true);
	if (ret)
		goto out_free;
	snprintf(c.bundle, sizeof(c.bundle), "%s", bundle);
	if (spec.netns_path)
		snprintf(c.netns, sizeof(c.netns), "%s", spec.netns_path);
	if (mkdir(c.dir, 0700)) {
		ret = -errno;
		rt_error(errno == EEXIST ? "container \"%s\" already exists"
					 : "cannot create the state of \"%s\"",
			 o->id);
		goto out_free;
	}
	rt_container_path(&c, "config.json", path, sizeof(path));
	ret = write_file(path, text, len, 0600);
	if (!ret) {
		rt_container_path(&c, "exec.fifo", path, sizeof(path));
		ret = mkfifo(path, 0600) ? -errno : 0;
	}
	if (ret) {
		rt_error("cannot set up %s: %s", c.dir, strerror(-ret));
		goto out_remove;
	}

	cfg = hvm_config_new();
	ret = cfg ? build_vm_config(cfg, &g, &spec, &c, &clone) : -ENOMEM;
	if (!ret && clone)
		ret = template_prepare(cfg, &g);
	if (ret)
		goto out_remove;
	if (spec.process.terminal) {
		if (!o->console_socket) {
			rt_error(
				"process.terminal is set but no --console-socket was given");
			ret = -EINVAL;
			goto out_remove;
		}
		ret = rt_console_open(&console, o->console_socket,
				      &spec.process, err, sizeof(err));
		if (ret) {
			rt_error("console: %s", err);
			goto out_remove;
		}
	}

	if (pipe2(ready, O_CLOEXEC)) {
		ret = -errno;
		goto out_remove;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		rt_error("fork: %s", strerror(errno));
		goto out_remove;
	}
	if (pid == 0) {
		close(ready[0]);
		if (console.slave >= 0) {
			/* The terminal is the container's stdio. */
			setsid();
			rt_console_make_controlling(console.slave);
			dup2(console.slave, 0);
			dup2(console.slave, 1);
			dup2(console.slave, 2);
		}
		/* A clone has no oci-init to take signals on port 1026. */
		vmm_main(cfg, &c, &spec, &console,
			 !clone && g.kernel && strcmp(g.kernel, "builtin"),
			 clone && !is_sandbox(&spec), ready[1]);
	}
	close(ready[1]);
	ready[1] = -1;
	rt_console_close(&console);
	n = read(ready[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (strcmp(buf, "ok")) {
		rt_error("%s", buf[0] ? buf : "the VMM process died");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ret = -EIO;
		goto out_remove;
	}
	c.pid = pid;
	c.pid_start = rt_process_start_time(pid);
	rt_format_time(c.created, sizeof(c.created));
	ret = rt_container_save(&c);
	if (!ret && o->pid_file) {
		ret = write_pid_file(o->pid_file, pid);
		if (ret)
			rt_error("--pid-file %s: %s", o->pid_file,
				 strerror(-ret));
	}
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out_remove;
	}
	rt_debug("container %s created: VMM pid %d", c.id, (int)pid);
	goto out_free;

out_remove:
	rt_container_remove(&c);
out_free:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	rt_console_close(&console);
	hvm_config_free(cfg);
	oci_spec_free(&spec);
	rt_guest_config_free(&g);
	free(text);
	return ret ? ret : pid;
}

int cmd_create(int argc, char **argv)
{
	struct create_opts o;

	if (parse_create_opts(argc, argv, &o))
		return 1;
	return create_container(&o) > 0 ? 0 : 1;
}

/* run: create + start, then wait for the container unless --detach. */
int cmd_run(int argc, char **argv)
{
	struct create_opts o;
	char *start_argv[] = { "start", NULL, NULL };
	bool detach = false;
	pid_t pid;
	int status;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--detach"))
			detach = true;
	if (parse_create_opts(argc, argv, &o))
		return 1;
	pid = create_container(&o);
	if (pid <= 0)
		return 1;
	start_argv[1] = (char *)o.id;
	if (cmd_start(2, start_argv))
		return 1;
	if (detach)
		return 0;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
