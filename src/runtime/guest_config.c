// SPDX-License-Identifier: LGPL-2.1-or-later
/* The runtime configuration file and resources -> hintvm options. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "guest_config.h"

#ifndef RT_DEFAULT_GUEST_INIT
#define RT_DEFAULT_GUEST_INIT "/usr/local/libexec/hintvm/hintvm-oci-init"
#endif

/*
 * Options a pod may set by default: they tune the VM, name no host file
 * and cannot reach outside it. kernel, initrd, disk, net and the like are
 * the node owner's to allow (annotations = ... in the file).
 */
#define DEFAULT_ANNOTATIONS \
	"cpus,mem,sched-hints,halt-poll,pin,pv,hugepages,stats,kvm-control"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void rt_guest_config_defaults(struct rt_guest_config *g)
{
	struct utsname u;

	memset(g, 0, sizeof(*g));
	/* The host's own kernel, as kvmtool boots by default. */
	if (!uname(&u) &&
	    asprintf(&g->kernel, "/boot/vmlinuz-%s", u.release) < 0)
		g->kernel = NULL;
	g->guest_init = strdup(RT_DEFAULT_GUEST_INIT);
	/* The image stays on the host: no copy per VM (docs/oci-runtime.md). */
	g->rootfs_share = true;
	g->cpus = 1;
	g->mem_mib = RT_DEFAULT_MEM_MIB;
	g->overhead_mib = RT_DEFAULT_OVERHEAD_MIB;
	g->annotations = strdup(DEFAULT_ANNOTATIONS);
}

void rt_guest_config_free(struct rt_guest_config *g)
{
	free(g->kernel);
	free(g->initrd);
	free(g->guest_init);
	free(g->cmdline);
	free(g->annotations);
	for (size_t i = 0; i < g->noptions; i++) {
		free(g->options[i].key);
		free(g->options[i].value);
	}
	memset(g, 0, sizeof(*g));
}

int rt_parse_mib(const char *s, uint64_t *mib)
{
	unsigned long long n;
	char *end;
	uint64_t shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		*mib = (n + (1ULL << 20) - 1) >> 20;
		return 0;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (end[1] && strcasecmp(end + 1, "iB") && strcasecmp(end + 1, "B"))
		return -EINVAL;
	if (n > (UINT64_MAX >> shift))
		return -EINVAL;
	*mib = ((n << shift) + (1ULL << 20) - 1) >> 20;
	return 0;
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n > max)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

static int set_str(char **dst, const char *value)
{
	free(*dst);
	*dst = strdup(value);
	return *dst ? 0 : -ENOMEM;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int set_key(struct rt_guest_config *g, const char *key,
		   const char *value, unsigned int line, char *err,
		   size_t errlen)
{
	if (!strcmp(key, "kernel"))
		return set_str(&g->kernel, value);
	if (!strcmp(key, "initrd"))
		return set_str(&g->initrd, value);
	if (!strcmp(key, "rootfs")) {
		if (strcmp(value, "share") && strcmp(value, "initramfs"))
			return fail(
				err, errlen,
				"line %u: rootfs = \"%s\": use share or initramfs",
				line, value);
		g->rootfs_share = !strcmp(value, "share");
		return 0;
	}
	/* Not hintvm's option of that name: the runtime decides per VM. */
	if (!strcmp(key, "template")) {
		if (strcmp(value, "auto") && strcmp(value, "off"))
			return fail(
				err, errlen,
				"line %u: template = \"%s\": use auto or off",
				line, value);
		g->template_auto = !strcmp(value, "auto");
		return 0;
	}
	if (!strcmp(key, "guest-init"))
		return set_str(&g->guest_init, value);
	if (!strcmp(key, "cmdline"))
		return set_str(&g->cmdline, value);
	if (!strcmp(key, "annotations"))
		return set_str(&g->annotations, value);
	if (!strcmp(key, "cpus") || !strcmp(key, "max-cpus")) {
		unsigned int n;

		if (parse_uint(value, 1024, &n) || (!n && !strcmp(key, "cpus")))
			return fail(err, errlen,
				    "line %u: %s = \"%s\" is not a vCPU count",
				    line, key, value);
		*(!strcmp(key, "cpus") ? &g->cpus : &g->max_cpus) = n;
		return 0;
	}
	if (!strcmp(key, "mem") || !strcmp(key, "mem-overhead")) {
		uint64_t mib;

		if (rt_parse_mib(value, &mib))
			return fail(
				err, errlen,
				"line %u: %s = \"%s\" is not a size (e.g. 256M)",
				line, key, value);
		*(!strcmp(key, "mem") ? &g->mem_mib : &g->overhead_mib) = mib;
		return 0;
	}
	/* Any other key is a hintvm option, checked when the VM is built. */
	if (g->noptions == RT_MAX_OPTIONS)
		return fail(err, errlen, "line %u: more than %d options", line,
			    RT_MAX_OPTIONS);
	g->options[g->noptions].key = strdup(key);
	g->options[g->noptions].value = *value ? strdup(value) : NULL;
	g->noptions++;
	return 0;
}

int rt_guest_config_parse(struct rt_guest_config *g, const char *text,
			  char *err, size_t errlen)
{
	char *copy = strdup(text), *rest = copy, *line;
	unsigned int lineno = 0;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	/* strsep, not strtok: empty lines count for the line numbers. */
	while (!ret && (line = strsep(&rest, "\n"))) {
		char *hash = strchr(line, '#'), *eq, *key;

		lineno++;
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (eq)
			*eq = '\0';
		key = trim(key);
		ret = set_key(g, key, eq ? trim(eq + 1) : "", lineno, err,
			      errlen);
	}
	free(copy);
	return ret;
}

int rt_guest_config_load(struct rt_guest_config *g, const char *path, char *err,
			 size_t errlen)
{
	char buf[65536];
	size_t n;
	FILE *f;
	int ret;

	rt_guest_config_defaults(g);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0
				       : fail(err, errlen, "%s: %s", path,
					      strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	ret = rt_guest_config_parse(g, buf, err, errlen);
	if (ret && err[0]) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		fail(err, errlen, "%s: %s", path, msg);
	}
	return ret;
}

/* The number of CPUs in a list such as "0-3,6"; -EINVAL if malformed. */
static int count_cpus(const char *list)
{
	const char *p = list;
	int count = 0;

	while (*p) {
		char *end;
		unsigned long a, b;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtoul(end + 1, &end, 10);
		}
		if (b < a || b > 4095)
			return -EINVAL;
		count += (int)(b - a + 1);
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return count ? count : -EINVAL;
}

int rt_map_resources(const struct rt_guest_config *g,
		     const struct oci_resources *r, unsigned int host_cpus,
		     struct rt_vm_resources *out, char *err, size_t errlen)
{
	unsigned int max = g->max_cpus ? g->max_cpus : host_cpus;

	memset(out, 0, sizeof(*out));
	out->cpus = g->cpus;
	if (r->cpuset_cpus && *r->cpuset_cpus) {
		int n = count_cpus(r->cpuset_cpus);

		if (n < 0)
			return fail(
				err, errlen,
				"linux.resources.cpu.cpus \"%s\" is not a CPU list",
				r->cpuset_cpus);
		if (strlen(r->cpuset_cpus) >= sizeof(out->pin))
			return fail(err, errlen,
				    "linux.resources.cpu.cpus is too long");
		out->cpus = (unsigned int)n;
		snprintf(out->pin, sizeof(out->pin), "%s", r->cpuset_cpus);
	}
	/* A quota is the tighter statement of how much CPU time it gets. */
	if (r->cpu_quota > 0 && r->cpu_period > 0) {
		uint64_t q = (uint64_t)r->cpu_quota;
		uint64_t n = (q + r->cpu_period - 1) / r->cpu_period;

		out->cpus = n > 1024 ? 1024 : (unsigned int)n;
	}
	if (max && out->cpus > max)
		out->cpus = max;
	if (!out->cpus)
		out->cpus = 1;

	out->mem_mib = g->mem_mib;
	if (r->memory_limit > 0) {
		uint64_t limit_mib = (uint64_t)r->memory_limit >> 20;

		if (limit_mib < g->overhead_mib + RT_MIN_GUEST_MIB)
			return fail(
				err, errlen,
				"memory limit %lld bytes is below what a VM needs: %llu MiB of guest RAM plus hintvm's %llu MiB",
				(long long)r->memory_limit,
				(unsigned long long)RT_MIN_GUEST_MIB,
				(unsigned long long)g->overhead_mib);
		out->mem_mib = limit_mib - g->overhead_mib;
	}
	return 0;
}

bool rt_annotation_allowed(const struct rt_guest_config *g, const char *key)
{
	size_t klen = strlen(key);
	const char *p = g->annotations;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len == klen && !strncmp(p, key, len))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}
