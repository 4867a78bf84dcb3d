// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Making a template and starting clones from it (docs/template.md).
 *
 * Making: boot the VM, knock on the agent's vsock port until it greets
 * (HELLO, docs/agent.md: the agent listens only once its boot duties are
 * done), snapshot it paused into a directory of its own next to the
 * store's templates, write the key, stop the VM, and rename the
 * directory to the key: a template appears whole or not at all, and of
 * two makers of one key the second finds the first's and drops its own.
 *
 * A clone: the template's snapshot restored with the caller's identity
 * (name, control socket, vsock CID and socket); the template's devices
 * come from its key, so the caller need not repeat them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi/agent_proto.h"
#include "agent/agent_client.h"
#include "base/clock.h"
#include "base/log.h"
#include "core/vm.h"
#include "hintvm/hintvm.h"
#include "template/template.h"
#include "vmm/snapshot.h"

/* Between two knocks on the agent's port while the guest boots. */
#define KNOCK_INTERVAL_MS 20

static int write_file_at(int dir, const char *path, const char *name,
			 const char *text, size_t len)
{
	int fd = openat(dir, name,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	size_t done = 0;
	int r = 0;

	if (fd < 0)
		return hvm_set_errno_error("template %s/%s: create", path,
					   name);
	while (r == 0 && done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = hvm_set_errno_error("template %s/%s: write", path,
						name);
		else
			done += (size_t)n;
	}
	if (r == 0 && fsync(fd) < 0)
		r = hvm_set_errno_error("template %s/%s: fsync", path, name);
	close(fd);
	return r;
}

/*
 * Knock until the agent greets, the VM ends or TIMEOUT_MS pass. Each
 * knock is a fresh connection, closed at once: a restore resets every
 * connection anyway (the vsock TRANSPORT_RESET), and the agent serves a
 * closed one by forgetting it.
 */
static int wait_for_agent(struct hvm_vm *handle, int timeout_ms)
{
	struct vm *vm = (struct vm *)handle;
	uint64_t deadline = hvm_monotonic_ns() + (uint64_t)timeout_ms * 1000000;

	for (;;) {
		int fd = hvm_vm_vsock_connect(handle), r;

		if (fd < 0)
			return fd;
		r = agent_greet(fd, "template VM", AGENT_VSOCK_PORT);
		close(fd);
		if (r == 0)
			return 0;
		if (atomic_load(&vm->stopping))
			return hvm_set_error(
				-ECHILD,
				"the template VM ended before its agent answered on vsock port %u: %s",
				AGENT_VSOCK_PORT, vm->exit.detail);
		if (hvm_monotonic_ns() >= deadline)
			return hvm_set_error(
				-ETIMEDOUT,
				"the template VM's agent did not answer on vsock port %u within %d ms (last: %s)",
				AGENT_VSOCK_PORT, timeout_ms, hvm_last_error());
		usleep(KNOCK_INTERVAL_MS * 1000);
	}
}

/*
 * The boot runs on a thread of its own: hvm_vm_start makes the calling
 * thread the VM's --user (docs/sandbox.md), and the thread that made the
 * directory must stay who it is to rename it into the store. The
 * snapshot's files are opened before, by the caller, so the VM's user
 * needs no access to the store.
 */
struct boot_job {
	const struct hvm_config *cfg;
	const char *key;
	int state_fd, mem_fd;
	int timeout_ms;
	int result;
	char error[512];
};

static void *boot_and_snapshot(void *arg)
{
	struct boot_job *job = arg;
	struct hvm_config *copy = config_dup(job->cfg);
	struct hvm_exit ended;
	struct hvm_vm *vm = NULL;
	char name[40];
	int r;

	if (!copy) {
		job->result = hvm_set_error(-ENOMEM, "out of memory");
		snprintf(job->error, sizeof(job->error), "%s",
			 hvm_last_error());
		return NULL;
	}
	free(copy->template_key); /* it boots: it is no clone */
	copy->template_key = NULL;
	/* Knocked on through hvm_vm_vsock_connect: the socket the caller
	 * named is the clone's, not the template VM's. */
	free(copy->vsock.uds);
	copy->vsock.uds = NULL;
	/*
	 * Its own name and no control socket: nothing steers it but this
	 * function. Without the per-thread sandbox: this thread knocks on
	 * the agent's port and writes the snapshot after hvm_vm_start,
	 * which would confine it to the filter of a thread that only waits.
	 */
	snprintf(name, sizeof(name), "template-%.12s", job->key);
	r = hvm_config_set(copy, "name", name);
	if (r == 0)
		r = hvm_config_set(copy, "control", "none");
	if (r == 0)
		r = hvm_config_set(copy, "sandbox", "off");
	if (r == 0) {
		vm = hvm_vm_create(copy);
		r = vm ? 0 : -EINVAL; /* the reason is in hvm_last_error() */
	}
	if (r == 0)
		r = hvm_vm_start(vm);
	if (r == 0)
		r = wait_for_agent(vm, job->timeout_ms);
	if (r == 0)
		r = snapshot_save_fds((struct vm *)vm, job->state_fd,
				      job->mem_fd, true);
	/* The first failure is the one to tell. */
	snprintf(job->error, sizeof(job->error), "%s", hvm_last_error());
	if (vm) {
		hvm_vm_stop(vm);
		hvm_vm_wait(vm, &ended);
		hvm_vm_destroy(vm);
	}
	hvm_config_free(copy);
	job->result = r;
	return NULL;
}

/* Write the key's files and the snapshot into the directory TMP. */
static int fill_tmp(const struct hvm_config *cfg, struct template_key *k,
		    int dirfd, const char *tmp, const char *tmp_path,
		    int timeout_ms)
{
	struct boot_job job = { .cfg = cfg,
				.key = k->hex,
				.state_fd = -1,
				.mem_fd = -1,
				.timeout_ms = timeout_ms };
	int tdir = openat(dirfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char made[64];
	pthread_t thread;
	int r;

	if (tdir < 0)
		return hvm_set_errno_error("template %s", tmp_path);
	snprintf(made, sizeof(made), "made=%lld\n", (long long)time(NULL));
	if (k->origin_len + strlen(made) < sizeof(k->origin)) {
		strcpy(k->origin + k->origin_len, made);
		k->origin_len += strlen(made);
	}
	r = write_file_at(tdir, tmp_path, TEMPLATE_KEY_FILE, k->text, k->len);
	if (r == 0)
		r = write_file_at(tdir, tmp_path, TEMPLATE_ORIGIN_FILE,
				  k->origin, k->origin_len);
	close(tdir);
	if (r == 0)
		r = snapshot_open_dir(tmp_path, &job.state_fd, &job.mem_fd);
	if (r < 0)
		return r;
	if (pthread_create(&thread, NULL, boot_and_snapshot, &job)) {
		r = hvm_set_error(-EAGAIN, "template: cannot start a thread");
	} else {
		pthread_join(thread, NULL);
		r = job.result;
		if (r < 0)
			hvm_set_error(r, "%s", job.error);
	}
	if (r == 0 && (fsync(job.state_fd) < 0 || fsync(job.mem_fd) < 0))
		r = hvm_set_errno_error("template %s: fsync", tmp_path);
	close(job.state_fd);
	close(job.mem_fd);
	return r;
}

static void remove_tmp(int dirfd, const char *dir, const char *tmp)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", hvm_last_error());
	if (template_remove(dirfd, dir, tmp) < 0)
		pr_warn("%s", hvm_last_error());
	hvm_set_error(-EIO, "%s", why); /* keep the reason the caller sees */
}

static int make(const struct hvm_config *cfg, const char *dir, int timeout_ms,
		struct template_key *k)
{
	char tmp[80], tmp_path[4096 + 80], key_path[4096 + 80];
	struct template_host host;
	uint64_t disk, mem;
	int dirfd, r;

	r = template_host_this(&host);
	if (r == 0)
		r = template_key_gather(cfg, &host, k);
	if (r < 0)
		return r;
	dirfd = template_dir_open(dir, true);
	if (dirfd < 0)
		return dirfd;
	/* Made already (and still whole and ours)? */
	r = template_load(dirfd, dir, k->hex, &(struct template_key){ 0 },
			  &disk, &mem);
	if (r == 0 || r != -ENOENT) {
		close(dirfd);
		return r == 0 ? 0 : r;
	}
	snprintf(tmp, sizeof(tmp), ".tmp-%.16s-%d", k->hex, (int)getpid());
	snprintf(tmp_path, sizeof(tmp_path), "%s/%s", dir, tmp);
	snprintf(key_path, sizeof(key_path), "%s/%s", dir, k->hex);
	if (mkdirat(dirfd, tmp, 0700) < 0) {
		r = hvm_set_errno_error("template: mkdir %s", tmp_path);
		close(dirfd);
		return r;
	}
	r = fill_tmp(cfg, k, dirfd, tmp, tmp_path, timeout_ms);
	if (r == 0 && renameat(dirfd, tmp, dirfd, k->hex) < 0) {
		/* Another maker was faster: its template is as good. */
		if (errno == EEXIST || errno == ENOTEMPTY)
			r = 1;
		else
			r = hvm_set_errno_error("template: rename %s to %s",
						tmp_path, key_path);
	}
	if (r != 0)
		remove_tmp(dirfd, dir, tmp);
	close(dirfd);
	return r < 0 ? r : r == 1 ? 0 : 1;
}

int hvm_template_make(const struct hvm_config *cfg, const char *dir,
		      int timeout_ms, char key[65])
{
	struct template_key *k;
	char def[4096];
	int r;

	if (!cfg)
		return hvm_set_error(-EINVAL, "hvm_template_make: no config");
	if (!dir)
		dir = cfg->template_dir;
	r = template_dir_or_default(&dir, def, sizeof(def));
	if (r < 0)
		return r;
	k = malloc(sizeof(*k));
	if (!k)
		return hvm_set_error(-ENOMEM, "out of memory");
	r = make(cfg, dir,
		 timeout_ms > 0 ? timeout_ms : TEMPLATE_READY_TIMEOUT_MS, k);
	if (r >= 0 && key)
		memcpy(key, k->hex, sizeof(k->hex));
	free(k);
	return r;
}

/*
 * The clone's configuration: CFG's identity and host-side wiring, the
 * template's devices (from its key: the snapshot must find the same
 * ones, in the same order).
 */
static int clone_config(struct hvm_config *c, const struct template_key *k,
			const char *path)
{
	char v[64];
	int r = 0;

	if (!template_text_get(k->text, k->len, "console", v, sizeof(v)))
		r = hvm_config_set(c, "console", v);
	if (r == 0 && !template_text_get(k->text, k->len, "rng", v, sizeof(v)))
		r = hvm_config_set(c, "rng", v);
	if (r == 0 &&
	    !template_text_get(k->text, k->len, "agent", v, sizeof(v)) &&
	    strcmp(v, "none")) {
		/* The agent's host side; its boot files are not loaded. */
		c->agent = true;
	}
	if (r == 0 &&
	    !template_text_get(k->text, k->len, "vsock", v, sizeof(v)) &&
	    !strcmp(v, "on") && !c->vsock.enabled && !c->agent)
		r = hvm_set_error(
			-EINVAL,
			"template %s has a vsock device: give the clone its own, --vsock cid=N,uds=PATH",
			path);
	if (r == 0)
		r = hvm_config_set(c, "restore", path);
	return r;
}

struct hvm_vm *hvm_template_restore(const struct hvm_config *cfg,
				    const char *dir, const char *key)
{
	char def[4096], path[4096 + 80], why[512], hex[65];
	struct template_host host;
	struct template_key *k = NULL;
	struct hvm_config *c = NULL;
	struct hvm_vm *vm = NULL;
	uint64_t disk, mem;
	int dirfd = -1, r;

	if (!cfg || !key) {
		hvm_set_error(-EINVAL,
			      "hvm_template_restore: no config or key");
		return NULL;
	}
	if (cfg->restore) {
		hvm_set_error(
			-EINVAL,
			"--template and --restore: give one or the other");
		return NULL;
	}
	r = template_dir_or_default(&dir, def, sizeof(def));
	if (r < 0)
		return NULL;
	k = malloc(sizeof(*k));
	if (!k) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	r = template_host_this(&host);
	/* auto: CFG's own key, the template made when there is none. */
	if (r == 0 && !strcmp(key, "auto")) {
		struct hvm_config *quiet = config_dup(cfg);

		r = quiet ? 0 : hvm_set_error(-ENOMEM, "out of memory");
		/* Its boot is not the clone's: no console, as no stdio. */
		if (r == 0)
			r = hvm_config_set_console_fds(quiet, -1, -1);
		if (r == 0)
			r = hvm_template_make(quiet, dir, 0, hex);
		if (quiet)
			hvm_config_free(quiet);
		key = hex;
	} else if (r == 0 && !template_key_valid(key)) {
		r = hvm_set_error(
			-EINVAL,
			"--template '%s': expected auto or a key of 64 lower-case hex digits (hintvm template list)",
			key);
	}
	if (r >= 0) {
		dirfd = template_dir_open(dir, false);
		r = dirfd < 0 ? dirfd : 0;
	}
	if (r == 0)
		r = template_load(dirfd, dir, key, k, &disk, &mem);
	if (r == 0 && template_stale(k, &host, false, why, sizeof(why)))
		r = hvm_set_error(
			-ESTALE,
			"template %s/%s cannot be used: %s (hintvm template list removes it)",
			dir, key, why);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, key);
		c = config_dup(cfg);
		r = c ? 0 : hvm_set_error(-ENOMEM, "out of memory");
		if (r == 0) {
			/* hvm_vm_create restores it, and must not come back. */
			free(c->template_key);
			c->template_key = NULL;
			r = clone_config(c, k, path);
		}
	}
	if (r == 0)
		vm = hvm_vm_create(c);
	if (c)
		hvm_config_free(c);
	if (dirfd >= 0)
		close(dirfd);
	free(k);
	return vm;
}
