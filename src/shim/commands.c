// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The binary commands containerd 1.6 runs with the bundle as the working
 * directory (runtime/v2/shim/shim.go, util.go):
 *
 *   start   re-executes this binary, detached, as the long-lived shim
 *           listening on /run/containerd/s/<sha256(address/ns/id)>,
 *           writes that address into the bundle's "address" file and
 *           prints it (no newline) once the shim listens;
 *   delete  cleans up after a shim that is gone: the VM (its VMM process
 *           and the runtime's state directory), the rootfs mounts, the
 *           socket; prints a DeleteResponse protobuf on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "runtime/state.h"
#include "base/sha256.h"
#include "shim/pod.h"
#include "shim/shim.h"
#include "task_shim.pb-c.h"

/* The long-lived shim tells start it listens through this fd (serve.c). */
#define SHIM_READY_ENV "HINTVM_SHIM_READY_FD"
#define SHIM_START_TIMEOUT_MS 10000

void shim_socket_address(const char *address, const char *ns, const char *id,
			 char *out, size_t len)
{
	char joined[PATH_MAX * 2];
	uint8_t sum[32];
	int n;

	/* Go's filepath.Join(address, ns, id): one '/' between parts. */
	n = snprintf(joined, sizeof(joined), "%s/%s/%s", address, ns, id);
	sha256(joined, n > 0 ? (size_t)n : 0, sum);
	n = snprintf(out, len, "unix://" SHIM_SOCKET_DIR "/");
	for (int i = 0; i < 32 && n > 0 && (size_t)n + 2 < len; i++)
		n += snprintf(out + n, len - (size_t)n, "%02x", sum[i]);
}

int shim_set_state_root(const char *ns)
{
	static char root[sizeof(SHIM_STATE_ROOT) + SHIM_MAX_NS + 1];

	/* The namespace becomes a path component: the id rules fit it. */
	if (strlen(ns) > SHIM_MAX_NS || !rt_valid_id(ns)) {
		fprintf(stderr,
			SHIM_NAME
			": namespace \"%s\": expected at most %d of [A-Za-z0-9_.+-], not starting with '.'\n",
			ns, SHIM_MAX_NS);
		return -EINVAL;
	}
	snprintf(root, sizeof(root), SHIM_STATE_ROOT "/%s", ns);
	rt.root = root;
	return 0;
}

static int enter_bundle(const struct shim_flags *f)
{
	if (!f->id || !rt_valid_id(f->id)) {
		fprintf(stderr,
			SHIM_NAME
			": -id \"%s\": expected a task id of [A-Za-z0-9_.+-]\n",
			f->id ? f->id : "");
		return -EINVAL;
	}
	if (f->bundle && *f->bundle && chdir(f->bundle)) {
		fprintf(stderr, SHIM_NAME ": -bundle %s: %s\n", f->bundle,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Whether a shim already serves PATH (containerd re-running start). */
static bool socket_serves(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ok = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

/* The bundle's "address" file, written whole then renamed as Go does. */
static int write_address(const char *address)
{
	FILE *fp = fopen(".address", "w");

	if (!fp || fputs(address, fp) < 0 || fclose(fp)) {
		fprintf(stderr,
			SHIM_NAME ": cannot write the address file: %s\n",
			strerror(errno));
		return -EIO;
	}
	return rename(".address", "address") ? -errno : 0;
}

/* containerd writes the runtime options to start's stdin: read them all
 * so that its writer never fails; they select nothing here yet. */
static void drain_stdin(void)
{
	char buf[4096];

	if (isatty(0))
		return;
	while (read(0, buf, sizeof(buf)) > 0)
		;
}

int shim_cmd_start(const struct shim_flags *f, char *self)
{
	char address[sizeof("unix://" SHIM_SOCKET_DIR "/") + 64 + 1];
	char fdnum[16], msg[512];
	struct pod_info pod;
	char *args[16];
	int ready[2], n = 0, devnull;
	const char *path;
	struct pollfd pfd;
	ssize_t got = 0;
	pid_t pid;

	if (enter_bundle(f))
		return -1;
	drain_stdin();
	/* A pod's app container goes to its sandbox's shim (pod.c). */
	if (pod_info_read(".", &pod, msg, sizeof(msg))) {
		fprintf(stderr, SHIM_NAME ": %s\n", msg);
		return -1;
	}
	shim_socket_address(f->address ? f->address : "", f->namespace,
			    pod.role == POD_CONTAINER ? pod.sandbox_id : f->id,
			    address, sizeof(address));
	path = address + strlen("unix://");
	if (pod.role == POD_CONTAINER) {
		if (!socket_serves(path)) {
			fprintf(stderr,
				SHIM_NAME
				": container %s: no shim serves its pod sandbox %s (%s)\n",
				f->id, pod.sandbox_id, path);
			return -1;
		}
		goto done;
	}
	if (mkdir("/run/containerd", 0711) && errno != EEXIST)
		goto mkdir_failed;
	if (mkdir(SHIM_SOCKET_DIR, 0711) && errno != EEXIST)
		goto mkdir_failed;
	if (!access(path, F_OK)) {
		if (socket_serves(path))
			goto done; /* one shim per task: it is there */
		unlink(path); /* left by a shim that died */
	}

	if (pipe2(ready, O_CLOEXEC)) {
		perror(SHIM_NAME ": pipe");
		return -1;
	}
	args[n++] = self;
	args[n++] = "-namespace";
	args[n++] = (char *)f->namespace;
	args[n++] = "-id";
	args[n++] = (char *)f->id;
	args[n++] = "-address";
	args[n++] = (char *)(f->address ? f->address : "");
	args[n++] = "-socket";
	args[n++] = (char *)path;
	if (f->debug)
		args[n++] = "-debug";
	args[n] = NULL;
	snprintf(fdnum, sizeof(fdnum), "%d", ready[1]);

	pid = fork();
	if (pid < 0) {
		perror(SHIM_NAME ": fork");
		return -1;
	}
	if (pid == 0) {
		/*
		 * Detached: a session of its own (containerd's signals to
		 * its process group do not reach it), and nothing of start's
		 * stdio, which containerd reads to EOF for the address.
		 */
		setsid();
		devnull = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3 && devnull >= 0; fd++)
			dup2(devnull, fd);
		if (devnull > 2)
			close(devnull);
		fcntl(ready[1], F_SETFD, 0);
		setenv(SHIM_READY_ENV, fdnum, 1);
		execv("/proc/self/exe", args);
		dprintf(ready[1], "exec /proc/self/exe: %s", strerror(errno));
		_exit(127);
	}
	close(ready[1]);
	pfd = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (poll(&pfd, 1, SHIM_START_TIMEOUT_MS) > 0)
		got = read(ready[0], msg, sizeof(msg) - 1);
	close(ready[0]);
	msg[got > 0 ? got : 0] = '\0';
	if (strcmp(msg, "ok")) {
		fprintf(stderr, SHIM_NAME ": the shim did not start: %s\n",
			msg[0] ? msg : "no answer within 10 s");
		kill(pid, SIGKILL);
		unlink(path);
		return -1;
	}
done:
	if (write_address(address))
		return -1;
	fputs(address, stdout);
	return fflush(stdout) ? -1 : 0;

mkdir_failed:
	fprintf(stderr, SHIM_NAME ": cannot create " SHIM_SOCKET_DIR ": %s\n",
		strerror(errno));
	return -1;
}

/* The socket the bundle's address file names, if it is one of ours. */
static void remove_socket(void)
{
	char address[PATH_MAX] = "";
	const char *prefix = "unix://" SHIM_SOCKET_DIR "/";
	FILE *fp = fopen("address", "r");

	if (!fp)
		return;
	if (!fgets(address, sizeof(address), fp))
		address[0] = '\0';
	fclose(fp);
	if (!strncmp(address, prefix, strlen(prefix)) &&
	    !strchr(address + strlen(prefix), '/'))
		unlink(address + strlen("unix://"));
}

int shim_cmd_delete(const struct shim_flags *f)
{
	Containerd__Task__V2__DeleteResponse resp =
		CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	char *del_argv[] = { "delete", "--force", (char *)f->id, NULL };
	char rootfs[PATH_MAX];
	struct rt_container c;
	struct timespec now;
	uint8_t *buf;
	size_t len;
	int ret;

	if (enter_bundle(f))
		return -1;
	/*
	 * The runtime's own forced delete: SIGKILL to the VMM process (its
	 * pid checked with its start time), then its state directory, which
	 * holds the VM's control socket. Nothing there is not an error.
	 */
	ret = 0;
	if (!rt_container_init(&c, f->id, false) && !access(c.dir, F_OK)) {
		optind = 0;
		ret = cmd_delete(3, del_argv);
	}
	if (getcwd(rootfs, sizeof(rootfs) - sizeof("/rootfs")))
		shim_rootfs_unmount(strcat(rootfs, "/rootfs"));
	remove_socket();

	clock_gettime(CLOCK_REALTIME, &now);
	at.seconds = now.tv_sec;
	at.nanos = (int32_t)now.tv_nsec;
	/* What containerd's runc shim reports for a task it had to kill. */
	resp.exit_status = 128 + SIGKILL;
	resp.exited_at = &at;
	len = protobuf_c_message_get_packed_size(&resp.base);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -1;
	protobuf_c_message_pack(&resp.base, buf);
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout))
		ret = 1;
	free(buf);
	return ret ? -1 : 0;
}
