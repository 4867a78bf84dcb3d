// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest agent's initramfs (docs/agent.md, "The initramfs"): the agent
 * built into libhintvm as /init, /dev/console, and the kernel modules a
 * distribution kernel needs for the agent's devices, with their
 * dependencies from modules.dep, in load order. kvmtool's habit of
 * booting the host's own kernel is the model: the modules come from
 * /lib/modules/VER (or any unpacked kernel package's modules directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "hintvm/hintvm.h"
#include "image/builtin_agent.h"
#include "image/cpio.h"
#include "image/initramfs.h"
#include "image/kmod_info.h"

/* What the agent's devices and root file systems need, in load order. */
static const char *const wanted_modules[] = {
	"virtio_pci", "virtio_mmio",
	"vmw_vsock_virtio_transport", /* vsock: the agent's channel */
	"virtio_blk", "virtio_net", "virtio_console", "virtio_rng",
	/* Before ext4 and erofs: libcrc32c asks the crypto API for it. */
	"crc32c_generic", "ext4", "erofs",
	"overlay", /* roots: a disk image, under an overlay */
	"9pnet_virtio", "9p", /* roots: a shared directory */
	"pvpanic_mmio", "pvpanic_pci", /* a panic ends hintvm as a crash */
};

#define MODULES_MAX_DEP (64u << 20)
#define MODULE_MAX_SIZE (64u << 20)
#define AGENT_MODULE_DIR "lib/modules/hintvm-agent"

struct mod {
	char *path; /* relative to the modules directory */
	char *deps; /* space-separated paths (modules.dep) */
	char name[64]; /* basename without .ko*, '-' as '_' */
	int state; /* 0 new, 1 visiting, 2 ordered */
};

struct mod_table {
	const char *dir;
	bool by_name; /* no modules.dep: deps from each file's .modinfo */
	struct mod *mods;
	size_t count;
	struct mod **order;
	size_t nr_order;
};

static void module_name(const char *path, char *name, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i + 1 < size && base[i] && strncmp(base + i, ".ko", 3); i++)
		name[i] = base[i] == '-' ? '_' : base[i];
	name[i] = '\0';
}

/* Parse modules.dep ("kernel/x/y.ko: kernel/a.ko kernel/b.ko"). */
static int parse_dep(char *text, struct mod_table *t)
{
	size_t lines = 0;
	char *save = NULL;

	for (char *p = text; *p; p++)
		lines += *p == '\n';
	t->mods = calloc(lines + 1, sizeof(*t->mods));
	t->order = calloc(lines + 1, sizeof(*t->order));
	if (!t->mods || !t->order)
		return -ENOMEM;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		struct mod *m;

		if (!colon || t->count > lines)
			continue;
		*colon = '\0';
		m = &t->mods[t->count++];
		m->path = line;
		m->deps = colon + 1;
		module_name(line, m->name, sizeof(m->name));
	}
	return 0;
}

/* modules.order ("kernel/x/y.ko"), when there is no modules.dep. */
static int parse_order(char *text, struct mod_table *t)
{
	size_t lines = 0;
	char *save = NULL;

	for (char *p = text; *p; p++)
		lines += *p == '\n';
	t->mods = calloc(lines + 1, sizeof(*t->mods));
	t->order = calloc(lines + 1, sizeof(*t->order));
	if (!t->mods || !t->order)
		return -ENOMEM;
	t->by_name = true;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct mod *m;

		if (!strstr(line, ".ko") || t->count > lines)
			continue;
		m = &t->mods[t->count++];
		m->path = line;
		module_name(line, m->name, sizeof(m->name));
	}
	return 0;
}

static struct mod *find_by_name(struct mod_table *t, const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (!strcmp(t->mods[i].name, name))
			return &t->mods[i];
	return NULL;
}

static struct mod *find_by_path(struct mod_table *t, const char *path,
				size_t len)
{
	for (size_t i = 0; i < t->count; i++)
		if (strlen(t->mods[i].path) == len &&
		    !strncmp(t->mods[i].path, path, len))
			return &t->mods[i];
	return NULL;
}

/* Order M after its dependencies (depth first; cycles are cut). */
static void order_by_name(struct mod_table *t, struct mod *m,
			  unsigned int depth);

static void order_module(struct mod_table *t, struct mod *m, unsigned int depth)
{
	const char *p = m->deps;

	if (m->state || depth > 64)
		return;
	if (t->by_name) {
		order_by_name(t, m, depth);
		return;
	}
	m->state = 1;
	while (*p) {
		size_t len;
		struct mod *dep;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (!len)
			break;
		dep = find_by_path(t, p, len);
		if (dep)
			order_module(t, dep, depth + 1);
		p += len;
	}
	m->state = 2;
	t->order[t->nr_order++] = m;
}

/* The same from the module file's own "depends=" (no modules.dep). */
static void order_by_name(struct mod_table *t, struct mod *m,
			  unsigned int depth)
{
	char path[PATH_MAX], deps[1024], *save = NULL;

	m->state = 1;
	snprintf(path, sizeof(path), "%s/%s", t->dir, m->path);
	if (kmod_read_depends(path, deps, sizeof(deps)) < 0) {
		pr_warn("initramfs: cannot read the dependencies of %s (compressed? run depmod)",
			path);
		deps[0] = '\0';
	}
	for (char *name = strtok_r(deps, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		char norm[64];
		struct mod *dep;

		module_name(name, norm, sizeof(norm));
		dep = find_by_name(t, norm);
		if (dep)
			order_module(t, dep, depth + 1);
	}
	m->state = 2;
	t->order[t->nr_order++] = m;
}

static bool builtin_module(const char *modules_dir, const char *name)
{
	char path[PATH_MAX], line[512], mod[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/modules.builtin", modules_dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		module_name(line, mod, sizeof(mod));
		found = !strcmp(mod, name);
	}
	fclose(f);
	return found;
}

static int add_modules(struct cpio *c, const char *modules_dir)
{
	struct mod_table t = { 0 };
	char path[PATH_MAX], *order_text = NULL;
	size_t dep_size, order_len = 0;
	uint8_t *dep_text = NULL;
	bool by_order = false;
	int r;

	/*
	 * modules.dep when depmod made one; an unpacked kernel package has
	 * only modules.order, and each module's .modinfo names its deps.
	 */
	t.dir = modules_dir;
	snprintf(path, sizeof(path), "%s/modules.dep", modules_dir);
	if (access(path, F_OK) < 0) {
		by_order = true;
		snprintf(path, sizeof(path), "%s/modules.order", modules_dir);
	}
	r = read_whole_file(path, by_order ? "modules.order" : "modules.dep",
			    MODULES_MAX_DEP, &dep_text, &dep_size);
	if (r < 0)
		return hvm_set_error(
			r,
			"%s (not a kernel's modules directory? give the guest kernel's /lib/modules/VERSION)",
			hvm_last_error());
	/* A text file: NUL-terminate it (read_whole_file does not). */
	{
		uint8_t *text = realloc(dep_text, dep_size + 1);

		if (!text) {
			r = -ENOMEM;
			goto out;
		}
		dep_text = text;
		dep_text[dep_size] = '\0';
	}
	r = by_order ? parse_order((char *)dep_text, &t)
		     : parse_dep((char *)dep_text, &t);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < sizeof(wanted_modules) / sizeof(*wanted_modules);
	     i++) {
		struct mod *m = find_by_name(&t, wanted_modules[i]);

		if (m)
			order_module(&t, m, 0);
		else if (!builtin_module(modules_dir, wanted_modules[i]))
			pr_debug("initramfs: %s has no module %s", modules_dir,
				 wanted_modules[i]);
	}
	order_text = calloc(t.nr_order, 80);
	if (!order_text && t.nr_order) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t.nr_order; i++) {
		const char *base = strrchr(t.order[i]->path, '/');
		char member[PATH_MAX];
		uint8_t *data;
		size_t size;

		base = base ? base + 1 : t.order[i]->path;
		if (strlen(base) > 78)
			continue;
		snprintf(path, sizeof(path), "%s/%s", modules_dir,
			 t.order[i]->path);
		r = read_whole_file(path, "kernel module", MODULE_MAX_SIZE,
				    &data, &size);
		if (r < 0)
			goto out;
		snprintf(member, sizeof(member), AGENT_MODULE_DIR "/%s", base);
		cpio_add_file(c, member, 0644, data, size);
		free(data);
		order_len +=
			(size_t)sprintf(order_text + order_len, "%s\n", base);
	}
	cpio_add_file(c, AGENT_MODULE_DIR "/order", 0644, order_text,
		      order_len);
	pr_debug("initramfs: %zu modules from %s", t.nr_order, modules_dir);
	r = 0;
out:
	free(order_text);
	free(t.mods);
	free(t.order);
	free(dep_text);
	return r;
}

/* The kernel's unpacker creates no missing parents: name each one. */
static void add_parents(struct cpio *c, const char *dest)
{
	char dir[PATH_MAX];

	for (const char *p = strchr(dest, '/'); p; p = strchr(p + 1, '/')) {
		if ((size_t)(p - dest) >= sizeof(dir))
			return;
		memcpy(dir, dest, (size_t)(p - dest));
		dir[p - dest] = '\0';
		cpio_add_dir(c, dir);
	}
}

int initramfs_build(const char *modules_dir,
		    const struct initramfs_extra *extra, size_t nr_extra,
		    uint8_t **data, size_t *size)
{
	static const char *const dirs[] = {
		"dev",	   "proc", "sys",	  "run",	   "tmp",
		"newroot", "lib",  "lib/modules", AGENT_MODULE_DIR
	};
	struct cpio c;
	int r;

	/* Defined on every path, so that no caller reads an unset buffer
	 * (the compiler cannot see that every error return is negative). */
	*data = NULL;
	*size = 0;
	if (!hvm_builtin_agent_size())
		return hvm_set_error(
			-ENOENT,
			"this build of libhintvm has no guest agent (a sanitizer build?)");
	cpio_init(&c);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		cpio_add_dir(&c, dirs[i]);
	/* The kernel opens /dev/console for init before devtmpfs exists. */
	cpio_add(&c, "dev/console", S_IFCHR | 0600, NULL, 0, 5, 1);
	cpio_add_file(&c, "init", 0755, hvm_builtin_agent_start,
		      hvm_builtin_agent_size());
	if (modules_dir) {
		r = add_modules(&c, modules_dir);
		if (r < 0) {
			cpio_release(&c);
			return r;
		}
	}
	for (size_t i = 0; i < nr_extra; i++) {
		uint8_t *file;
		size_t len;
		struct stat st;

		if (stat(extra[i].src, &st) < 0) {
			cpio_release(&c);
			return hvm_set_errno_error("initramfs: %s",
						   extra[i].src);
		}
		r = read_whole_file(extra[i].src, "file", INITRAMFS_MAX_FILE,
				    &file, &len);
		if (r < 0) {
			cpio_release(&c);
			return r;
		}
		add_parents(&c, extra[i].dest);
		cpio_add_file(&c, extra[i].dest, st.st_mode & 0777, file, len);
		free(file);
	}
	r = cpio_finish(&c);
	if (r < 0) {
		cpio_release(&c);
		return hvm_set_error(r, "initramfs: cannot build the archive");
	}
	*data = c.buf;
	*size = c.len;
	return 0;
}

/* ---- kernel versions and the cache -------------------------------------- */

static int version_from_header(const uint8_t *img, size_t size, char *buf,
			       size_t len)
{
	uint16_t off;
	size_t at, n;

	/* bzImage: "HdrS" at 0x202, kernel_version (offset - 0x200) at 0x20e. */
	if (size < 0x210 || memcmp(img + 0x202, "HdrS", 4))
		return -ENOENT;
	off = (uint16_t)(img[0x20e] | img[0x20f] << 8);
	at = 0x200u + off;
	if (!off || at >= size)
		return -ENOENT;
	for (n = 0; at + n < size && n + 1 < len && img[at + n] > ' ' &&
		    img[at + n] < 0x7f;
	     n++)
		buf[n] = (char)img[at + n];
	buf[n] = '\0';
	return n ? 0 : -ENOENT;
}

static int version_from_banner(const uint8_t *img, size_t size, char *buf,
			       size_t len)
{
	static const char banner[] = "Linux version ";
	const uint8_t *p = img, *end = img + size;

	while ((p = memmem(p, (size_t)(end - p), banner, sizeof(banner) - 1))) {
		size_t n = 0;

		p += sizeof(banner) - 1;
		while (p + n < end && n + 1 < len && p[n] > ' ' && p[n] < 0x7f)
			n++;
		/* The banner format string itself has "%s" there. */
		if (n && p[0] != '%') {
			memcpy(buf, p, n);
			buf[n] = '\0';
			return 0;
		}
	}
	return -ENOENT;
}

int hvm_kernel_version(const char *kernel, char *buf, size_t len)
{
	const uint8_t *img;
	size_t size;
	int r;

	if (!kernel || len < 2)
		return hvm_set_error(-EINVAL, "no kernel");
	r = map_whole_file(kernel, "kernel", 1u << 30, &img, &size);
	if (r < 0)
		return r;
	r = version_from_header(img, size, buf, len);
	if (r < 0)
		r = version_from_banner(img, size, buf, len);
	munmap((void *)img, size);
	if (r < 0) {
		/* A compressed image without a header: vmlinuz-VER, Image-VER. */
		const char *base = strrchr(kernel, '/'), *dash;

		base = base ? base + 1 : kernel;
		dash = strchr(base, '-');
		if (dash && dash[1] && strlen(dash + 1) < len) {
			strcpy(buf, dash + 1);
			return 0;
		}
		return hvm_set_error(
			-ENOENT,
			"cannot tell the version of kernel %s; name its modules directory (--agent-modules)",
			kernel);
	}
	return 0;
}

static uint64_t fnv1a(const uint8_t *data, size_t len, uint64_t h)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	return h;
}

static int cache_dir(char *buf, size_t len)
{
	const char *base = getenv("HINTVM_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (base && base[0])
		n = snprintf(buf, len, "%s", base);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/var/cache/hintvm/initramfs");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/hintvm", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/hintvm", home);
	else
		return hvm_set_error(
			-ENOENT, "no cache directory: set HINTVM_CACHE_DIR");
	if (n < 0 || (size_t)n >= len)
		return hvm_set_error(-ENAMETOOLONG, "cache directory too long");
	return 0;
}

static int mkdir_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int initramfs_write_file(const char *path, const uint8_t *data, size_t size)
{
	char tmp[PATH_MAX];
	size_t done = 0;
	int fd, r = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, getpid()) >=
	    sizeof(tmp))
		return hvm_set_error(-ENAMETOOLONG, "path too long: %s", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return hvm_set_errno_error("cannot create %s", tmp);
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = hvm_set_errno_error("writing %s", tmp);
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = hvm_set_errno_error("writing %s", tmp);
	if (r == 0 && rename(tmp, path) < 0)
		r = hvm_set_errno_error("cannot rename %s to %s", tmp, path);
	if (r < 0)
		unlink(tmp);
	return r;
}

int hvm_initramfs_cached(const char *kernel, const char *modules_dir,
			 char *path, size_t len)
{
	char version[128], dir[PATH_MAX], mods[PATH_MAX];
	uint8_t *data;
	size_t size;
	uint64_t key;
	int r;

	if (!modules_dir) {
		r = hvm_kernel_version(kernel, version, sizeof(version));
		if (r < 0)
			return r;
		snprintf(mods, sizeof(mods), "/lib/modules/%s", version);
		modules_dir = mods;
	} else {
		const char *base = strrchr(modules_dir, '/');

		snprintf(version, sizeof(version), "%s",
			 base && base[1] ? base + 1 : modules_dir);
	}
	for (char *p = version; *p; p++)
		if (*p == '/')
			*p = '_';
	r = cache_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	/* The agent's bytes and the modules directory key the file. */
	key = fnv1a(hvm_builtin_agent_start, hvm_builtin_agent_size(),
		    0xcbf29ce484222325ULL);
	key = fnv1a((const uint8_t *)modules_dir, strlen(modules_dir), key);
	if ((size_t)snprintf(path, len, "%s/agent-%s-%016llx.cpio", dir,
			     version, (unsigned long long)key) >= len)
		return hvm_set_error(-ENAMETOOLONG, "cache path too long");
	if (access(path, R_OK) == 0)
		return 0;
	r = initramfs_build(modules_dir, NULL, 0, &data, &size);
	if (r < 0)
		return r;
	r = mkdir_parents(dir);
	if (r < 0) {
		free(data);
		return hvm_set_error(r, "cannot create %s: %s", dir,
				     strerror(-r));
	}
	r = initramfs_write_file(path, data, size);
	free(data);
	return r;
}

int hvm_initramfs_build(const char *modules_dir, const char *const *files,
			const char *out)
{
	struct initramfs_extra extra[64] = { { 0 } };
	size_t n = 0;
	uint8_t *data;
	size_t size;
	int r;

	for (; files && files[n]; n++) {
		const char *eq = strchr(files[n], '=');

		if (n >= 64)
			return hvm_set_error(-E2BIG,
					     "more than 64 extra files");
		if (!eq || eq == files[n] || !eq[1] || eq[1] == '/' ||
		    strstr(eq + 1, ".."))
			return hvm_set_error(
				-EINVAL,
				"extra file %s: want SRC=DEST (DEST relative, no ..)",
				files[n]);
		extra[n].src = strndup(files[n], (size_t)(eq - files[n]));
		extra[n].dest = eq + 1;
		if (!extra[n].src)
			return -ENOMEM;
	}
	r = initramfs_build(modules_dir, extra, n, &data, &size);
	for (size_t i = 0; i < n; i++)
		free((char *)extra[i].src);
	if (r < 0)
		return r;
	r = initramfs_write_file(out, data, size);
	free(data);
	return r;
}
