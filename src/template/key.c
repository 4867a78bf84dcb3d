// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A template's key (docs/template.md): the SHA-256 of a text naming,
 * line by line, everything the memory of a VM booted to a ready agent
 * depends on and nothing else: the contents (not the paths) of kernel,
 * initrd, agent and the agent's initramfs, the machine options that
 * shape the guest, the snapshot formats of this hintvm and the host CPU.
 * Change any of them and the key changes; the same inputs give the same
 * key on every run. Names and vsock CIDs are a clone's own and stay out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/sha256.h"
#include "core/arch.h"
#include "devices/virtio/virtio_device.h"
#include "hintvm/hintvm.h"
#include "image/builtin_agent.h"
#include "image/builtin_kernel.h"
#include "snapshot/format.h"
#include "template/template.h"

int template_host_this(struct template_host *host)
{
	int r = arch_host_cpu_id(host->cpu, sizeof(host->cpu));

	if (r < 0)
		return r;
	host->snapshot_format = SNAP_VERSION;
	host->virtio_state = VIRTIO_STATE_VERSION;
	return 0;
}

bool template_key_valid(const char *key)
{
	if (!key || strlen(key) != TEMPLATE_KEY_HEX)
		return false;
	for (const char *p = key; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

int template_check_config(const struct hvm_config *cfg)
{
	const char *what = NULL;

	if (cfg->nr_disks)
		what = "--disk (a clone would need its own copy of each image)";
	else if (cfg->nr_nets)
		what = "--net (virtio-net is not snapshotted yet)";
	else if (cfg->init_args && cfg->init_args[0])
		what = "--init-args or arguments after -- (a template has no main process: run it with hintvm exec)";
	else if (cfg->restore)
		what = "--restore";
	else if (cfg->hugepages)
		what = "--hugepages (a clone's memory is the template's file)";
	else if (cfg->arch.rr_partner)
		what = "--rr-partner (it cannot be snapshotted)";
	else if (cfg->agent_stdio_fd[0] >= 0)
		what = "--agent-stdio (a template has no main process)";
	if (what)
		return hvm_set_error(-EINVAL, "a VM template cannot have %s",
				     what);
	if (cfg->cmdline && strchr(cfg->cmdline, '\n'))
		return hvm_set_error(
			-EINVAL,
			"a VM template's --cmdline cannot hold a line break");
	if (!cfg->agent && !cfg->vsock.enabled)
		return hvm_set_error(
			-EINVAL,
			"a VM template needs --agent (or --vsock with an agent in the guest): it is snapshotted once its agent answers on vsock port %u",
			1024);
	return 0;
}

int template_file_sha256(const char *path, const char *what, char hex[65])
{
	struct sha256_ctx ctx;
	uint8_t buf[65536], sum[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return hvm_set_errno_error("%s %s: cannot open it", what, path);
	sha256_init(&ctx);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = hvm_set_errno_error("%s %s: read", what, path);
			close(fd);
			return (int)n;
		}
		sha256_update(&ctx, buf, (size_t)n);
	}
	close(fd);
	sha256_final(&ctx, sum);
	sha256_hex(sum, hex);
	return 0;
}

static void memory_sha256(const void *data, size_t len, char hex[65])
{
	uint8_t sum[32];

	sha256(data, len, sum);
	sha256_hex(sum, hex);
}

/* Append one "NAME=VALUE\n" line to TEXT (*LEN bytes used). */
static int __attribute__((format(printf, 4, 5)))
add_line(char *text, size_t *len, const char *name, const char *fmt, ...)
{
	size_t room = TEMPLATE_TEXT_MAX - *len;
	va_list ap;
	int n, m;

	n = snprintf(text + *len, room, "%s=", name);
	if (n < 0 || (size_t)n >= room)
		goto full;
	va_start(ap, fmt);
	m = vsnprintf(text + *len + n, room - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)(n + m + 1) >= room)
		goto full;
	text[*len + (size_t)(n + m)] = '\n';
	*len += (size_t)(n + m + 1);
	text[*len] = '\0';
	return 0;
full:
	return hvm_set_error(-E2BIG,
			     "template key: its %s line makes it over %u bytes",
			     name, TEMPLATE_TEXT_MAX);
}

/* A file part: its hash in the key, its path in the origin. */
static int add_file(struct template_key *k, const char *name, const char *path)
{
	char hex[65];
	int r;

	if (!path) {
		r = add_line(k->text, &k->len, name, "none");
		return r ? r
			 : add_line(k->origin, &k->origin_len, name, "none");
	}
	r = template_file_sha256(path, name, hex);
	if (r == 0)
		r = add_line(k->text, &k->len, name, "sha256:%s", hex);
	if (r == 0)
		r = add_line(k->origin, &k->origin_len, name, "%s", path);
	return r;
}

static const char *irqchip_name(enum irqchip_mode mode)
{
	switch (mode) {
	case IRQCHIP_AUTO:
		return "auto";
	case IRQCHIP_SPLIT:
		return "split";
	case IRQCHIP_KERNEL:
		return "kernel";
	}
	return "?";
}

int template_key_gather(const struct hvm_config *cfg,
			const struct template_host *host,
			struct template_key *k)
{
	char hex[65], agent_initramfs[4096];
	uint8_t sum[32];
	int r;

	memset(k, 0, sizeof(*k));
	r = template_check_config(cfg);
	if (r == 0)
		r = add_line(k->text, &k->len, "template", "%u",
			     TEMPLATE_KEY_VERSION);
	if (r == 0)
		r = add_line(k->text, &k->len, "arch", "%s",
#ifdef __x86_64__
			     "x86_64"
#else
			     "arm64"
#endif
		);
	/* The kernel: a file's contents, or the built-in test kernel's. */
	if (r == 0 && cfg->kernel) {
		r = add_file(k, "kernel", cfg->kernel);
	} else if (r == 0) {
		memory_sha256(hvm_builtin_kernel_start,
			      hvm_builtin_kernel_size(), hex);
		r = add_line(k->text, &k->len, "kernel", "sha256:%s", hex);
		if (r == 0)
			r = add_line(k->origin, &k->origin_len, "kernel",
				     "built-in");
	}
	if (r == 0)
		r = add_file(k, "initrd", cfg->initrd);
	/*
	 * --agent: the agent built into this library, and the initramfs it
	 * is packed in with the kernel's modules (cached, built on first
	 * use, as the boot would).
	 */
	if (r == 0 && cfg->agent) {
		if (!cfg->kernel)
			return hvm_set_error(
				-EINVAL,
				"--agent boots a Linux kernel: give --kernel");
		sha256(hvm_builtin_agent_start, hvm_builtin_agent_size(), sum);
		sha256_hex(sum, hex);
		r = add_line(k->text, &k->len, "agent", "sha256:%s", hex);
		if (r == 0)
			r = hvm_initramfs_cached(
				cfg->kernel, cfg->agent_modules,
				agent_initramfs, sizeof(agent_initramfs));
		if (r == 0)
			r = add_file(k, "agent-initramfs", agent_initramfs);
	} else if (r == 0) {
		r = add_line(k->text, &k->len, "agent", "none");
		if (r == 0)
			r = add_line(k->text, &k->len, "agent-initramfs",
				     "none");
		if (r == 0)
			r = add_line(k->origin, &k->origin_len,
				     "agent-initramfs", "none");
	}
	if (r == 0)
		r = add_line(k->text, &k->len, "cmdline", "%s",
			     cfg->cmdline ? cfg->cmdline : "");
	if (r == 0)
		r = add_line(k->text, &k->len, "cpus", "%u", cfg->cpus);
	if (r == 0)
		r = add_line(k->text, &k->len, "mem", "%llu",
			     (unsigned long long)cfg->mem);
	if (r == 0)
		r = add_line(k->text, &k->len, "irqchip", "%s",
			     irqchip_name(cfg->arch.irqchip));
	if (r == 0)
		r = add_line(k->text, &k->len, "console", "%s",
			     config_console_name(cfg->console));
	if (r == 0)
		r = add_line(k->text, &k->len, "rng", "%s",
			     cfg->rng ? "on" : "off");
	if (r == 0)
		r = add_line(k->text, &k->len, "vsock", "%s",
			     cfg->agent || cfg->vsock.enabled ? "on" : "off");
	/*
	 * Shares by tag, in order: the guest probed each device and knows it
	 * by its tag; the directory is each clone's own (the restore names
	 * it), and a share the template's guest used cannot be snapshotted
	 * (docs/snapshot.md, "Shares").
	 */
	if (r == 0) {
		char tags[HVM_MAX_SHARES * 65 + 8] = "none";
		size_t used = 0;

		for (unsigned int i = 0; r == 0 && i < cfg->nr_shares; i++) {
			int n = snprintf(tags + used, sizeof(tags) - used,
					 "%s%s", i ? "," : "",
					 cfg->shares[i].tag);

			if (n < 0 || (size_t)n >= sizeof(tags) - used)
				r = hvm_set_error(
					-EINVAL,
					"--share %s: tag '%s' is longer than a template's key takes",
					cfg->shares[i].path,
					cfg->shares[i].tag);
			else
				used += (size_t)n;
		}
		if (r == 0)
			r = add_line(k->text, &k->len, "shares", "%s", tags);
	}
	if (r == 0)
		r = add_line(k->text, &k->len, "snapshot-format", "%u",
			     host->snapshot_format);
	if (r == 0)
		r = add_line(k->text, &k->len, "virtio-state", "%u",
			     host->virtio_state);
	if (r == 0)
		r = add_line(k->text, &k->len, "cpu", "%s", host->cpu);
	if (r < 0)
		return r;
	sha256(k->text, k->len, sum);
	sha256_hex(sum, k->hex);
	return 0;
}

int template_text_get(const char *text, size_t len, const char *name, char *buf,
		      size_t size)
{
	size_t nlen = strlen(name);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t vlen;

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > nlen && !strncmp(p, name, nlen) &&
		    p[nlen] == '=') {
			vlen = (size_t)(eol - p) - nlen - 1;
			if (vlen >= size)
				return -ENOSPC;
			memcpy(buf, p + nlen + 1, vlen);
			buf[vlen] = '\0';
			return 0;
		}
		p = eol + 1;
	}
	return -ENOENT;
}

int hvm_template_key(const struct hvm_config *cfg, char key[65])
{
	struct template_host host;
	struct template_key *k;
	int r;

	if (!cfg || !key)
		return hvm_set_error(-EINVAL, "hvm_template_key: no config");
	k = malloc(sizeof(*k));
	if (!k)
		return hvm_set_error(-ENOMEM, "out of memory");
	r = template_host_this(&host);
	if (r == 0)
		r = template_key_gather(cfg, &host, k);
	if (r == 0)
		memcpy(key, k->hex, sizeof(k->hex));
	free(k);
	return r;
}
