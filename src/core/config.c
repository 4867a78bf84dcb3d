// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "abi/p9_mount_tag.h"
#include "abi/vm_name.h"
#include "base/file.h"
#include "base/log.h"
#include "base/parse.h"
#include "core/arch.h"
#include "core/config.h"
#include "sched/sched_config.h"

#define HVM_MIN_MEM (4ULL << 20)
/* Guest objects (--guest-objects): a few connections' worth at least. */
#define HVM_MIN_GUEST_OBJECTS (256ULL << 10)

struct option_def {
	struct hvm_option_info info;
	int (*parse)(struct hvm_config *cfg, const char *name,
		     const char *value);
};

static int set_string(char **field, const char *name, const char *value)
{
	char *copy;

	if (!value || !*value)
		return hvm_set_error(-EINVAL, "--%s needs a value", name);
	copy = strdup(value);
	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	free(*field);
	*field = copy;
	return 0;
}

static int parse_kernel(struct hvm_config *cfg, const char *name,
			const char *value)
{
	return set_string(&cfg->kernel, name, value);
}

static int parse_initrd(struct hvm_config *cfg, const char *name,
			const char *value)
{
	return set_string(&cfg->initrd, name, value);
}

static int parse_cmdline(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	char *copy = strdup(value ? value : "");

	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	free(cfg->cmdline);
	cfg->cmdline = copy;
	return 0;
}

static int parse_cpus(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	uint64_t n;

	if (parse_uint(value, 1, arch_max_vcpus(), &n) < 0)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a valid vCPU count; expected a number from 1 to %u",
			name, value ? value : "", arch_max_vcpus());
	cfg->cpus = (unsigned int)n;
	return 0;
}

/* --NAME's VALUE as bytes, or the error that says how to write one. */
static int parse_size_option(const char *name, const char *value,
			     const char *example, uint64_t *bytes)
{
	if (parse_size(value, bytes) < 0)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a memory size; expected a number with an optional K, M, G or T suffix (no suffix: MiB), e.g. %s",
			name, value ? value : "", example);
	return 0;
}

static int parse_mem(struct hvm_config *cfg, const char *name,
		     const char *value)
{
	uint64_t bytes;

	if (parse_size_option(name, value, "512M", &bytes) < 0)
		return -EINVAL;
	if (bytes < HVM_MIN_MEM)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is too small; a VM needs at least %llu MiB",
			name, value, HVM_MIN_MEM >> 20);
	if (bytes % 4096)
		return hvm_set_error(-EINVAL,
				     "--%s: '%s' is not a multiple of 4 KiB",
				     name, value);
	cfg->mem = bytes;
	return 0;
}

static int parse_guest_objects(struct hvm_config *cfg, const char *name,
			       const char *value)
{
	uint64_t bytes;

	if (parse_size_option(name, value, "64M", &bytes) < 0)
		return -EINVAL;
	if (bytes < HVM_MIN_GUEST_OBJECTS)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is too small; one vsock connection's buffer alone needs 64 KiB, so at least %llu KiB",
			name, value, HVM_MIN_GUEST_OBJECTS >> 10);
	cfg->guest_objects = bytes;
	return 0;
}

static int parse_hugepages(struct hvm_config *cfg, const char *name,
			   const char *value)
{
	return parse_switch(&cfg->hugepages, name, value);
}

static int parse_mem_overcommit(struct hvm_config *cfg, const char *name,
				const char *value)
{
	return parse_switch(&cfg->mem_overcommit, name, value);
}

static int parse_console(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	if (value && !strcmp(value, "serial"))
		cfg->console = CONSOLE_SERIAL;
	else if (value && !strcmp(value, "none"))
		cfg->console = CONSOLE_NONE;
	else if (value && !strcmp(value, "virtio"))
		cfg->console = CONSOLE_VIRTIO;
	else
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a console; expected serial, virtio or none",
			name, value ? value : "");
	return 0;
}

static int parse_irqchip(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	if (value && !strcmp(value, "split"))
		cfg->arch.irqchip = IRQCHIP_SPLIT;
	else if (value && !strcmp(value, "kernel"))
		cfg->arch.irqchip = IRQCHIP_KERNEL;
	else
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not an irqchip mode; expected split or kernel",
			name, value ? value : "");
	return 0;
}

/* --disk PATH[,ro][,direct][,lock=off]; repeat for more disks. */
static int parse_disk(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	struct hvm_disk_config disk = { 0 };
	char *copy, *item, *save = NULL;

	if (!value || !*value || *value == ',')
		return hvm_set_error(
			-EINVAL,
			"--%s needs an image path: PATH[,ro][,direct][,lock=off]",
			name);
	if (cfg->nr_disks == HVM_MAX_DISKS)
		return hvm_set_error(-EINVAL, "--%s: at most %d disks", name,
				     HVM_MAX_DISKS);
	copy = strdup(value);
	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	disk.path = strdup(strtok_r(copy, ",", &save));
	while ((item = strtok_r(NULL, ",", &save))) {
		if (!strcmp(item, "ro")) {
			disk.readonly = true;
		} else if (!strcmp(item, "direct")) {
			disk.direct = true;
		} else if (!strcmp(item, "lock=off")) {
			disk.no_lock = true;
		} else if (!strcmp(item, "lock=on")) {
			disk.no_lock = false;
		} else if (!strncmp(item, "iops=", 5) &&
			   parse_uint(item + 5, 1, 1000000000, &disk.iops) ==
				   0) {
			/* requests per second */
		} else if (!strncmp(item, "bw=", 3) &&
			   parse_rate(item + 3, &disk.bw) == 0) {
			/* bytes per second */
		} else if (!strncmp(item, "iops=", 5) ||
			   !strncmp(item, "bw=", 3)) {
			hvm_set_error(
				-EINVAL,
				"--%s %s: '%s' is not a rate; expected iops=N (1 to 1000000000 requests/s) or bw=BYTES[/s] (e.g. bw=10M)",
				name, value, item);
			free(disk.path);
			free(copy);
			return -EINVAL;
		} else {
			hvm_set_error(
				-EINVAL,
				"--%s %s: unknown disk option '%s'; expected ro, direct, lock=off, iops=N or bw=BYTES",
				name, value, item);
			free(disk.path);
			free(copy);
			return -EINVAL;
		}
	}
	free(copy);
	if (!disk.path)
		return hvm_set_error(-ENOMEM, "out of memory");
	cfg->disks[cfg->nr_disks++] = disk;
	return 0;
}

/* --share HOSTDIR,tag=TAG[,ro][,ids=mapped|host]; repeat for more. */
static int parse_share(struct hvm_config *cfg, const char *name,
		       const char *value)
{
	struct hvm_share_config share = { 0 };
	char *copy, *item, *save = NULL;
	int r = 0;

	if (!value || !*value || *value == ',')
		return hvm_set_error(
			-EINVAL,
			"--%s needs a directory: HOSTDIR,tag=TAG[,ro][,ids=mapped][,server=MODE]",
			name);
	if (cfg->nr_shares == HVM_MAX_SHARES)
		return hvm_set_error(-EINVAL, "--%s: at most %d shares", name,
				     HVM_MAX_SHARES);
	copy = strdup(value);
	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	share.path = strdup(strtok_r(copy, ",", &save));
	while (!r && (item = strtok_r(NULL, ",", &save))) {
		if (!strcmp(item, "ro")) {
			share.readonly = true;
		} else if (!strcmp(item, "ids=mapped")) {
			share.ids_mapped = true;
		} else if (!strcmp(item, "ids=host")) {
			share.ids_mapped = false;
		} else if (!strcmp(item, "server=auto")) {
			share.server = HVM_SHARE_SERVER_AUTO;
		} else if (!strcmp(item, "server=thread")) {
			share.server = HVM_SHARE_SERVER_THREAD;
		} else if (!strcmp(item, "server=process")) {
			share.server = HVM_SHARE_SERVER_PROCESS;
		} else if (!strncmp(item, "server=", 7)) {
			r = hvm_set_error(
				-EINVAL,
				"--%s %s: server '%s' is not thread, process or auto",
				name, value, item + 7);
		} else if (!strncmp(item, "tag=", 4)) {
			free(share.tag);
			share.tag = strdup(item + 4);
			if (!share.tag)
				r = hvm_set_error(-ENOMEM, "out of memory");
			else if (!p9_mount_tag_valid(share.tag))
				r = hvm_set_error(
					-EINVAL,
					"--%s %s: tag '%s' must be 1-%d characters of A-Z a-z 0-9 _ . -",
					name, value, share.tag,
					P9_MOUNT_TAG_MAX);
		} else {
			r = hvm_set_error(
				-EINVAL,
				"--%s %s: unknown share option '%s'; expected tag=TAG, ro, ids=mapped or server=thread|process|auto",
				name, value, item);
		}
	}
	free(copy);
	if (!r && !share.path)
		r = hvm_set_error(-ENOMEM, "out of memory");
	if (!r && !share.tag)
		r = hvm_set_error(
			-EINVAL,
			"--%s %s: a share needs a mount tag: HOSTDIR,tag=TAG",
			name, value);
	for (unsigned int i = 0; !r && i < cfg->nr_shares; i++)
		if (!strcmp(cfg->shares[i].tag, share.tag))
			r = hvm_set_error(-EINVAL,
					  "--%s %s: tag '%s' is already used",
					  name, value, share.tag);
	if (r) {
		free(share.path);
		free(share.tag);
		return r;
	}
	cfg->shares[cfg->nr_shares++] = share;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char end;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6 ||
	    strlen(s) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	/* A multicast or all-zero address cannot be a NIC's address. */
	if ((mac[0] & 1) ||
	    !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return -EINVAL;
	return 0;
}

/* --net tap=NAME[,mac=XX:XX:XX:XX:XX:XX]; repeat for more NICs. */
static int parse_net(struct hvm_config *cfg, const char *name,
		     const char *value)
{
	struct hvm_net_config net = { 0 };
	char *copy, *item, *save = NULL;
	int r = 0;

	if (!value || !*value)
		return hvm_set_error(
			-EINVAL, "--%s needs tap=NAME[,mac=XX:XX:XX:XX:XX:XX]",
			name);
	if (cfg->nr_nets == HVM_MAX_NETS)
		return hvm_set_error(-EINVAL, "--%s: at most %d NICs", name,
				     HVM_MAX_NETS);
	copy = strdup(value);
	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	for (item = strtok_r(copy, ",", &save); item && !r;
	     item = strtok_r(NULL, ",", &save)) {
		if (!strncmp(item, "tap=", 4)) {
			/* IFNAMSIZ is 16 with the NUL. */
			if (!item[4] || strlen(item + 4) > 15) {
				r = hvm_set_error(
					-EINVAL,
					"--%s: tap name '%s' must be 1 to 15 characters",
					name, item + 4);
				break;
			}
			free(net.tap);
			net.tap = strdup(item + 4);
		} else if (!strncmp(item, "bw=", 3)) {
			if (parse_rate(item + 3, &net.bw) < 0)
				r = hvm_set_error(
					-EINVAL,
					"--%s: '%s' is not a rate; expected bw=BYTES[/s] (e.g. bw=10M)",
					name, item);
		} else if (!strncmp(item, "mac=", 4)) {
			if (parse_mac(item + 4, net.mac) < 0)
				r = hvm_set_error(
					-EINVAL,
					"--%s: '%s' is not a unicast MAC address; expected six hex bytes like 52:54:00:12:34:56",
					name, item + 4);
			net.mac_set = true;
		} else {
			r = hvm_set_error(
				-EINVAL,
				"--%s %s: unknown option '%s'; expected tap=NAME, mac=MAC or bw=BYTES",
				name, value, item);
		}
	}
	free(copy);
	if (!r && !net.tap)
		r = hvm_set_error(-EINVAL, "--%s %s: no tap=NAME given", name,
				  value);
	if (r) {
		free(net.tap);
		return r;
	}
	cfg->nets[cfg->nr_nets++] = net;
	return 0;
}

static int parse_rng(struct hvm_config *cfg, const char *name,
		     const char *value)
{
	return parse_switch(&cfg->rng, name, value);
}

/* Jail rlimits unless ,nofile= / ,memlock= say otherwise. */
#define JAIL_DEFAULT_NOFILE 4096
#define JAIL_DEFAULT_MEMLOCK (64ULL << 20)

/* --jail DIR[,nofile=N][,memlock=SIZE] (docs/sandbox.md) */
static int parse_jail(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	uint64_t nofile = JAIL_DEFAULT_NOFILE, memlock = JAIL_DEFAULT_MEMLOCK;
	char *copy, *dir, *item, *save = NULL;
	int r = 0;

	if (!value || value[0] != '/')
		return hvm_set_error(
			-EINVAL,
			"--%s needs an absolute directory: DIR[,nofile=N][,memlock=SIZE]",
			name);
	copy = strdup(value);
	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	dir = strtok_r(copy, ",", &save);
	while (!r && (item = strtok_r(NULL, ",", &save))) {
		if (!strncmp(item, "nofile=", 7)) {
			if (parse_uint(item + 7, 64, 1 << 20, &nofile) < 0)
				r = hvm_set_error(
					-EINVAL,
					"--%s: '%s' is not an open-file limit; expected nofile=64 to 1048576",
					name, item);
		} else if (!strncmp(item, "memlock=", 8)) {
			if (parse_size(item + 8, &memlock) < 0)
				r = hvm_set_error(
					-EINVAL,
					"--%s: '%s' is not a size; expected memlock=SIZE, e.g. 64M",
					name, item);
		} else {
			r = hvm_set_error(
				-EINVAL,
				"--%s %s: unknown option '%s'; expected nofile=N or memlock=SIZE",
				name, value, item);
		}
	}
	if (!r)
		r = set_string(&cfg->jail_dir, name, dir);
	free(copy);
	if (r)
		return r;
	cfg->jail_nofile = nofile;
	cfg->jail_memlock = memlock;
	return 0;
}

/* --cgroup PATH: a cgroup directory (v1 or v2) hintvm moves itself into. */
static int parse_cgroup(struct hvm_config *cfg, const char *name,
			const char *value)
{
	if (!value || value[0] != '/')
		return hvm_set_error(
			-EINVAL,
			"--%s needs the absolute path of a cgroup directory, e.g. /sys/fs/cgroup/hintvm",
			name);
	return set_string(&cfg->cgroup_path, name, value);
}

/*
 * --sandbox on|off|auto (docs/sandbox.md). auto, hintvm run's default, is
 * on where the kernel has seccomp filters and off with a warning where it
 * has none; on insists.
 */
static int parse_sandbox(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	if (value && !strcmp(value, "auto")) {
		cfg->sandbox = cfg->sandbox_if_supported = true;
		return 0;
	}
	cfg->sandbox_if_supported = false;
	return parse_switch(&cfg->sandbox, name, value);
}

/*
 * --core-sched vm|vcpu|off (docs/sandbox.md). Whether the kernel and the
 * machine can is learnt when the VM is created: a config file may name it
 * on a host that cannot, and then the VM must not start unprotected.
 */
static const char *const core_sched_modes[] = {
	[HVM_CORE_SCHED_OFF] = "off",
	[HVM_CORE_SCHED_VM] = "vm",
	[HVM_CORE_SCHED_VCPU] = "vcpu",
};

const char *config_core_sched_name(enum hvm_core_sched mode)
{
	return core_sched_modes[mode];
}

static int parse_core_sched(struct hvm_config *cfg, const char *name,
			    const char *value)
{
	for (unsigned int i = 0;
	     value && i < sizeof(core_sched_modes) / sizeof(*core_sched_modes);
	     i++) {
		if (!strcmp(value, core_sched_modes[i])) {
			cfg->core_sched = (enum hvm_core_sched)i;
			return 0;
		}
	}
	return hvm_set_error(
		-EINVAL,
		"--%s: '%s' is not a core scheduling mode; expected vm, vcpu or off",
		name, value ? value : "");
}

/*
 * "A" or "A<SEP>B", ids from 1 below UINT32_MAX (uid_t's -1 is no id):
 * how many were given (1 or 2), 0 when VALUE is anything else.
 */
static int parse_id_pair(const char *value, char sep, uint64_t *a, uint64_t *b)
{
	char buf[32], *second;

	if (!value || strlen(value) >= sizeof(buf))
		return 0;
	strcpy(buf, value);
	second = strchr(buf, sep);
	if (second)
		*second++ = '\0';
	if (parse_uint(buf, 1, UINT32_MAX - 1, a) ||
	    (second && parse_uint(second, 1, UINT32_MAX - 1, b)))
		return 0;
	return second ? 2 : 1;
}

/*
 * --user auto|none|UID[:GID]. Names are not looked up: a VM's identity is
 * a number that no login shares, and NSS is not reachable from a jail.
 */
static int parse_user(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	uint64_t uid, gid;
	int n;

	if (value && !strcmp(value, "auto")) {
		cfg->user_mode = HVM_USER_AUTO;
		return 0;
	}
	if (value && !strcmp(value, "none")) {
		cfg->user_mode = HVM_USER_NONE;
		return 0;
	}
	n = parse_id_pair(value, ':', &uid, &gid);
	if (!n)
		return hvm_set_error(
			-EINVAL,
			"--%s %s: expected auto, none or UID[:GID] (numbers from 1; 0 is root)",
			name, value ? value : "");
	cfg->user_mode = HVM_USER_ID;
	cfg->user_uid = (uint32_t)uid;
	cfg->user_gid = n == 2 ? (uint32_t)gid : (uint32_t)uid;
	return 0;
}

/* --user-range FIRST-LAST: the uids (and gids) --user auto hands out. */
static int parse_user_range(struct hvm_config *cfg, const char *name,
			    const char *value)
{
	uint64_t first, last;

	if (parse_id_pair(value, '-', &first, &last) != 2 || first > last)
		return hvm_set_error(
			-EINVAL,
			"--%s %s: expected FIRST-LAST, uids from 1 with FIRST <= LAST",
			name, value ? value : "");
	cfg->user_first = (uint32_t)first;
	cfg->user_last = (uint32_t)last;
	return 0;
}

/*
 * --vsock cid=N[,uds=PATH]. The path leaves room for "_4294967295", the
 * suffix of the per-port sockets guest connections go to (sun_path holds
 * 107 characters).
 */
#define VSOCK_UDS_MAX (107 - 11)

static int parse_vsock(struct hvm_config *cfg, const char *name,
		       const char *value)
{
	struct hvm_vsock_config v = { .enabled = true };
	bool have_cid = false;
	char *copy, *item, *save = NULL;
	int r = 0;

	if (!value || !*value)
		return hvm_set_error(-EINVAL, "--%s needs cid=N[,uds=PATH]",
				     name);
	if (cfg->vsock.enabled)
		return hvm_set_error(
			-EINVAL,
			"--%s %s: a VM has at most one vsock device (already cid=%llu)",
			name, value, (unsigned long long)cfg->vsock.cid);
	copy = strdup(value);
	if (!copy)
		return hvm_set_error(-ENOMEM, "out of memory");
	for (item = strtok_r(copy, ",", &save); item && !r;
	     item = strtok_r(NULL, ",", &save)) {
		if (!strncmp(item, "cid=", 4)) {
			if (parse_uint(item + 4, 3, 0xfffffffeull, &v.cid) < 0)
				r = hvm_set_error(
					-EINVAL,
					"--%s: cid '%s' is not a guest CID; expected 3 to 4294967294 (0-2 are reserved, 4294967295 means any)",
					name, item + 4);
			have_cid = true;
		} else if (!strncmp(item, "uds=", 4)) {
			size_t len = strlen(item + 4);

			if (!len || len > VSOCK_UDS_MAX)
				r = hvm_set_error(
					-EINVAL,
					"--%s: uds path '%s' must be 1 to %d characters (Unix socket paths are short, and PATH_<port> must fit too)",
					name, item + 4, VSOCK_UDS_MAX);
			free(v.uds);
			v.uds = r ? NULL : strdup(item + 4);
			if (!r && !v.uds)
				r = hvm_set_error(-ENOMEM, "out of memory");
		} else {
			r = hvm_set_error(
				-EINVAL,
				"--%s %s: unknown option '%s'; expected cid=N or uds=PATH",
				name, value, item);
		}
	}
	free(copy);
	if (!r && !have_cid)
		r = hvm_set_error(-EINVAL, "--%s %s: no cid=N given", name,
				  value);
	if (r) {
		free(v.uds);
		return r;
	}
	cfg->vsock = v;
	return 0;
}

/* The guest agent (docs/agent.md). */
static int parse_agent(struct hvm_config *cfg, const char *name,
		       const char *value)
{
	return parse_switch(&cfg->agent, name, value);
}

/*
 * --agent-stdio: the main process's stdio is our stdin, stdout and stderr
 * over vsock (hvm_config_set_agent_stdio_fds() names other fds); the
 * console keeps no input then, and writes to stderr.
 */
static int parse_agent_stdio(struct hvm_config *cfg, const char *name,
			     const char *value)
{
	bool on;
	int r = parse_switch(&on, name, value);

	if (r < 0)
		return r;
	for (int i = 0; i < 3; i++)
		cfg->agent_stdio_fd[i] = on ? i : -1;
	if (on) {
		cfg->console_in_fd = -1;
		cfg->console_out_fd = STDERR_FILENO;
	}
	return 0;
}

static int parse_agent_modules(struct hvm_config *cfg, const char *name,
			       const char *value)
{
	return set_string(&cfg->agent_modules, name, value);
}

static int parse_init_args(struct hvm_config *cfg, const char *name,
			   const char *value)
{
	/* The kernel splits init's arguments at spaces, honouring "..." only. */
	if (value && strchr(value, '\n'))
		return hvm_set_error(
			-EINVAL, "--%s: no newlines on a kernel command line",
			name);
	return set_string(&cfg->init_args, name, value);
}

static int parse_verbose(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	uint64_t level = 1;

	if (value && parse_uint(value, 0, 3, &level) < 0)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a verbosity; expected 0 to 3", name,
			value);
	cfg->verbosity = (int)level;
	return 0;
}

static int parse_kvm_device(struct hvm_config *cfg, const char *name,
			    const char *value)
{
	return set_string(&cfg->kvm_path, name, value);
}

static int parse_restore(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	return set_string(&cfg->restore, name, value);
}

/* KEY|auto (docs/template.md): the key's form is checked where it is used. */
static int parse_template(struct hvm_config *cfg, const char *name,
			  const char *value)
{
	return set_string(&cfg->template_key, name, value);
}

static int parse_template_dir(struct hvm_config *cfg, const char *name,
			      const char *value)
{
	return set_string(&cfg->template_dir, name, value);
}

static int parse_rr_partner(struct hvm_config *cfg, const char *name,
			    const char *value)
{
	return parse_switch(&cfg->arch.rr_partner, name, value);
}

static int parse_dtb_dump(struct hvm_config *cfg, const char *name,
			  const char *value)
{
	return set_string(&cfg->arch.dtb_dump, name, value);
}

/* --cpu-features none | NAME[,NAME...] with NAME in pmu, sve, pauth. */
static int parse_cpu_features(struct hvm_config *cfg, const char *name,
			      const char *value)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} known[] = { { "pmu", CPU_FEATURE_PMU },
		      { "sve", CPU_FEATURE_SVE },
		      { "pauth", CPU_FEATURE_PAUTH } };
	uint32_t bits = 0;
	const char *p = value;

	if (!value || !*value)
		return hvm_set_error(-EINVAL, "--%s needs a value", name);
	if (!strcmp(value, "none")) {
		cfg->arch.cpu_features = 0;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (strlen(known[i].name) == len &&
			    !strncmp(p, known[i].name, len))
				break;
		}
		if (i == sizeof(known) / sizeof(known[0]))
			return hvm_set_error(
				-EINVAL,
				"--%s: '%.*s' is not a CPU feature; expected none or a list of pmu, sve, pauth",
				name, (int)len, p);
		bits |= known[i].bit;
		p += len;
		if (!*p)
			break;
		p++; /* the comma: an item must follow */
	}
	cfg->arch.cpu_features = bits;
	return 0;
}

static int parse_control(struct hvm_config *cfg, const char *name,
			 const char *value)
{
	if (value && !strcmp(value, "none")) {
		free(cfg->control_path);
		cfg->control_path = NULL;
		cfg->control_none = true;
		return 0;
	}
	cfg->control_none = false;
	return set_string(&cfg->control_path, name, value);
}

static int parse_name(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	int r = vm_name_check(value);

	return r < 0 ? r : set_string(&cfg->name, name, value);
}

static int parse_config_file(struct hvm_config *cfg, const char *name,
			     const char *value)
{
	if (!value || !*value)
		return hvm_set_error(-EINVAL, "--%s needs a file name", name);
	return hvm_config_load_file(cfg, value);
}

/* Order is help order. Bit positions in set_mask follow the index. */
static const struct option_def options[] = {
	{ { "kernel", 'k', "FILE",
	    "kernel image: PVH ELF or bzImage on x86, Image on arm64 (default: built-in test kernel)" },
	  parse_kernel },
	{ { "initrd", 'i', "FILE", "initial ramdisk" }, parse_initrd },
	{ { "cmdline", 'p', "STR", "kernel command line" }, parse_cmdline },
	{ { "cpus", 'c', "N", "number of vCPUs (default 1)" }, parse_cpus },
	{ { "mem", 'm', "SIZE", "guest RAM, e.g. 512M or 2G (default 256M)" },
	  parse_mem },
	{ { "guest-objects", 0, "SIZE",
	    "host memory the guest may make hintvm allocate: vsock connections and buffers, 9P fids and xattr buffers (default 64M)" },
	  parse_guest_objects },
	{ { "hugepages", 0, NULL, "back guest RAM with hugetlbfs pages" },
	  parse_hugepages },
	{ { "mem-overcommit", 0, NULL,
	    "allow more guest RAM than the host has" },
	  parse_mem_overcommit },
	{ { "console", 0, "KIND",
	    "guest console: serial (ttyS0 on stdio), virtio (hvc0) or none" },
	  parse_console },
	{ { "disk", 'd', "PATH[,ro][,direct][,lock=off][,iops=N][,bw=BYTES]",
	    "virtio-blk disk from a raw image or block device (repeatable)" },
	  parse_disk },
	{ { "net", 'n', "tap=NAME[,mac=MAC][,bw=BYTES]",
	    "virtio-net NIC on an existing tap interface (repeatable)" },
	  parse_net },
	{ { "rng", 0, NULL, "virtio-rng entropy device fed by getrandom" },
	  parse_rng },
	{ { "vsock", 0, "cid=N[,uds=PATH]",
	    "virtio-vsock with guest CID N; host programs reach it through PATH (Firecracker's hybrid protocol)" },
	  parse_vsock },
	{ { "share", 0, "HOSTDIR,tag=TAG[,ro][,ids=mapped][,server=MODE]",
	    "share a host directory over virtio-9p, mounted by tag (repeatable); server=process serves it from a separate file-server process (root only), thread from hintvm's own threads, auto (default) a process when --user switches the VM's user" },
	  parse_share },
	{ { "agent", 0, NULL,
	    "boot the guest agent (hintvm exec; docs/agent.md): its initramfs for --kernel, a vsock device, the main process's exit status" },
	  parse_agent },
	{ { "agent-stdio", 0, NULL,
	    "with --agent: the main process's stdin, stdout and stderr are hintvm's own, over vsock (stderr apart, the end of stdin reaches it); the console goes to stderr" },
	  parse_agent_stdio },
	{ { "agent-modules", 0, "DIR",
	    "with --agent: the kernel's modules directory (default /lib/modules/VERSION)" },
	  parse_agent_modules },
	{ { "init-args", 0, "ARGS",
	    "arguments for the guest's init (after -- on its command line); with --agent, the main process" },
	  parse_init_args },
	{ { "verbose", 'v', NULL,
	    "log what hintvm does (repeat or =N for more)" },
	  parse_verbose },
	{ { "kvm-device", 0, "PATH", "KVM device node (default /dev/kvm)" },
	  parse_kvm_device },
	{ { "rr-partner", 0, NULL,
	    "add the request/response benchmark partner (bench/, x86)" },
	  parse_rr_partner },
	{ { "irqchip", 0, "MODE",
	    "x86 interrupt controllers: split (I/O APIC in hintvm, no PIC/PIT; default where KVM has it) or kernel (all in KVM, with the PIT)" },
	  parse_irqchip },
	{ { "cpu-features", 0, "LIST",
	    "arm64: optional vCPU features pmu, sve, pauth (default none)" },
	  parse_cpu_features },
	{ { "dtb-dump", 0, "FILE",
	    "arm64: also write the generated device tree blob to FILE" },
	  parse_dtb_dump },
	{ { "restore", 0, "DIR",
	    "run the VM saved in snapshot DIR (hintvm ctl VM snapshot DIR) instead of booting; its machine options come from the snapshot" },
	  parse_restore },
	{ { "template", 0, "KEY|auto",
	    "start a clone of VM template KEY (hintvm template list), or with auto of this configuration's own template, made on first use (docs/template.md)" },
	  parse_template },
	{ { "template-dir", 0, "DIR",
	    "the template store (default $HINTVM_TEMPLATE_DIR, else /var/cache/hintvm/templates for root)" },
	  parse_template_dir },
	{ { "name", 0, "NAME",
	    "name the VM for hintvm ctl, ls and top (default vm-PID)" },
	  parse_name },
	{ { "control", 0, "PATH|none",
	    "control socket at PATH instead of the runtime directory, or none" },
	  parse_control },
	{ { "config", 0, "FILE", "read options from FILE (key = value lines)" },
	  parse_config_file },
	/* Scheduling (src/sched/sched_config.c, docs/sched.md). */
	{ { "pin", 0, "MODE",
	    "vCPU pinning: auto, none, dedicated or a host CPU list" },
	  sched_parse_pin },
	{ { "halt-poll", 0, "MODE",
	    "halt polling: auto (adaptive), off or a fixed time in ns" },
	  sched_parse_halt_poll },
	{ { "pv", 0, "LIST",
	    "paravirt features: host, none or names, e.g. host,-steal-time" },
	  sched_parse_pv },
	{ { "kvm-control", 0, "LIST",
	    "set the kernel/ series' per-VM controls, e.g. ple-window=0" },
	  sched_parse_kvm_control },
	{ { "sched-hints", 0, "on|off",
	    "scheduling awareness; off: behave like a plain VMM, which still applies an explicit --pin and --halt-poll (default on)" },
	  sched_parse_hints },
	{ { "stats", 0, NULL,
	    "print exit, halt-poll and scheduling statistics at exit" },
	  sched_parse_stats },
	{ { "stats-interval", 0, "SECONDS",
	    "with --stats, also print them every SECONDS" },
	  sched_parse_stats_interval },
	{ { "stats-json", 0, "FILE", "write the statistics as JSON to FILE" },
	  sched_parse_stats_json },
	/* Sandbox (src/sandbox/sandbox.c, docs/sandbox.md). */
	{ { "sandbox", 0, "on|off|auto",
	    "seccomp filter and Landlock domain per thread, no capabilities, no_new_privs (hintvm run: default auto, on where the kernel has seccomp; on insists on seccomp only: without Landlock, said at -vv, the VM runs under seccomp alone)" },
	  parse_sandbox },
	{ { "jail", 0, "DIR[,nofile=N][,memlock=SIZE]",
	    "run in new user, mount, PID, IPC and network namespaces rooted at DIR, with rlimits" },
	  parse_jail },
	{ { "cgroup", 0, "PATH",
	    "join the cgroup at PATH before the VM exists" },
	  parse_cgroup },
	{ { "core-sched", 0, "vm|vcpu|off",
	    "core scheduling: no other tenant's task on a vCPU's SMT sibling; vm: one cookie for the VM's threads, vcpu: and one per vCPU (default off)" },
	  parse_core_sched },
	{ { "user", 0, "auto|none|UID[:GID]",
	    "who the VM's threads are after setup; auto: started as root, a uid/gid of its own from --user-range (hintvm run's default)" },
	  parse_user },
	{ { "user-range", 0, "FIRST-LAST",
	    "the uids and gids --user auto hands out, one per running VM (default 1879048192-1879113727)" },
	  parse_user_range },
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))
_Static_assert(NR_OPTIONS <= 64, "set_mask has 64 bits");

static const struct option_def *find_option(const char *key, size_t *index)
{
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		if (!strcmp(options[i].info.name, key)) {
			*index = i;
			return &options[i];
		}
	}
	return NULL;
}

const struct hvm_option_info *hvm_options(size_t *count)
{
	static struct hvm_option_info infos[NR_OPTIONS];

	for (size_t i = 0; i < NR_OPTIONS; i++)
		infos[i] = options[i].info;
	if (count)
		*count = NR_OPTIONS;
	return infos;
}

int config_init_defaults(struct hvm_config *cfg)
{
	*cfg = (struct hvm_config){
		.cpus = 1,
		.mem = 256ULL << 20,
		.guest_objects = HVM_DEFAULT_GUEST_OBJECTS,
		.console = CONSOLE_SERIAL,
		.console_in_fd = STDIN_FILENO,
		.console_out_fd = STDOUT_FILENO,
		.agent_stdio_fd = { -1, -1, -1 },
		/* 0x70000000: far above logins and the usual subuid blocks. */
		.user_first = HVM_USER_RANGE_FIRST,
		.user_last = HVM_USER_RANGE_LAST,
		.sched = malloc(sizeof(*cfg->sched)),
	};
	if (!cfg->sched)
		return hvm_set_error(-ENOMEM, "out of memory");
	sched_options_defaults(cfg->sched);
	return 0;
}

struct hvm_config *hvm_config_new(void)
{
	struct hvm_config *cfg = malloc(sizeof(*cfg));

	if (!cfg) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	if (config_init_defaults(cfg) < 0) {
		free(cfg);
		return NULL;
	}
	return cfg;
}

void config_free_fields(struct hvm_config *cfg)
{
	free(cfg->kernel);
	free(cfg->initrd);
	free(cfg->cmdline);
	free(cfg->kvm_path);
	free(cfg->restore);
	free(cfg->template_key);
	free(cfg->template_dir);
	free(cfg->arch.dtb_dump);
	free(cfg->control_path);
	free(cfg->name);
	free(cfg->jail_dir);
	free(cfg->cgroup_path);
	for (unsigned int i = 0; i < cfg->nr_disks; i++)
		free(cfg->disks[i].path);
	for (unsigned int i = 0; i < cfg->nr_nets; i++)
		free(cfg->nets[i].tap);
	cfg->nr_disks = cfg->nr_nets = 0;
	free(cfg->vsock.uds);
	cfg->vsock = (struct hvm_vsock_config){ 0 };
	free(cfg->agent_modules);
	free(cfg->init_args);
	free(cfg->agent_initrd);
	cfg->agent_modules = cfg->init_args = cfg->agent_initrd = NULL;
	for (unsigned int i = 0; i < cfg->nr_shares; i++) {
		free(cfg->shares[i].path);
		free(cfg->shares[i].tag);
	}
	cfg->nr_shares = 0;
	free(cfg->sched);
	cfg->sched = NULL;
}

void hvm_config_free(struct hvm_config *cfg)
{
	if (!cfg)
		return;
	config_free_fields(cfg);
	free(cfg);
}

static int dup_field(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

struct hvm_config *config_dup(const struct hvm_config *cfg)
{
	struct hvm_config *copy = malloc(sizeof(*copy));
	int r;

	if (!copy)
		return NULL;
	*copy = *cfg;
	copy->kernel = copy->initrd = copy->cmdline = copy->kvm_path = NULL;
	copy->restore = NULL;
	copy->template_key = NULL;
	copy->template_dir = NULL;
	copy->control_path = copy->arch.dtb_dump = copy->name = NULL;
	copy->sched = NULL;
	copy->vsock.uds = NULL;
	copy->agent_modules = copy->init_args = copy->agent_initrd = NULL;
	copy->jail_dir = copy->cgroup_path = NULL;
	for (unsigned int i = 0; i < cfg->nr_disks; i++)
		copy->disks[i].path = NULL;
	for (unsigned int i = 0; i < cfg->nr_nets; i++)
		copy->nets[i].tap = NULL;
	for (unsigned int i = 0; i < cfg->nr_shares; i++)
		copy->shares[i].path = copy->shares[i].tag = NULL;
	r = dup_field(&copy->kernel, cfg->kernel) ||
	    dup_field(&copy->initrd, cfg->initrd) ||
	    dup_field(&copy->cmdline, cfg->cmdline) ||
	    dup_field(&copy->kvm_path, cfg->kvm_path) ||
	    dup_field(&copy->restore, cfg->restore) ||
	    dup_field(&copy->template_key, cfg->template_key) ||
	    dup_field(&copy->template_dir, cfg->template_dir) ||
	    dup_field(&copy->control_path, cfg->control_path) ||
	    dup_field(&copy->name, cfg->name) ||
	    dup_field(&copy->arch.dtb_dump, cfg->arch.dtb_dump) ||
	    dup_field(&copy->vsock.uds, cfg->vsock.uds) ||
	    dup_field(&copy->agent_modules, cfg->agent_modules) ||
	    dup_field(&copy->init_args, cfg->init_args) ||
	    dup_field(&copy->agent_initrd, cfg->agent_initrd) ||
	    dup_field(&copy->jail_dir, cfg->jail_dir) ||
	    dup_field(&copy->cgroup_path, cfg->cgroup_path);
	for (unsigned int i = 0; !r && i < cfg->nr_disks; i++)
		r = dup_field(&copy->disks[i].path, cfg->disks[i].path);
	for (unsigned int i = 0; !r && i < cfg->nr_nets; i++)
		r = dup_field(&copy->nets[i].tap, cfg->nets[i].tap);
	for (unsigned int i = 0; !r && i < cfg->nr_shares; i++)
		r = dup_field(&copy->shares[i].path, cfg->shares[i].path) ||
		    dup_field(&copy->shares[i].tag, cfg->shares[i].tag);
	if (!r) {
		copy->sched = malloc(sizeof(*copy->sched));
		if (copy->sched)
			*copy->sched = *cfg->sched;
		else
			r = -ENOMEM;
	}
	if (r) {
		hvm_config_free(copy);
		return NULL;
	}
	return copy;
}

int hvm_config_set(struct hvm_config *cfg, const char *key, const char *value)
{
	const struct option_def *opt;
	size_t index;
	int r;

	if (!cfg || !key)
		return hvm_set_error(-EINVAL,
				     "hvm_config_set: no config or key");
	opt = find_option(key, &index);
	if (!opt)
		return hvm_set_error(
			-EINVAL, "unknown option '%s' (see hintvm run --help)",
			key);
	r = opt->parse(cfg, key, value);
	if (r == 0)
		cfg->set_mask |= 1ULL << index;
	return r;
}

int hvm_config_set_default(struct hvm_config *cfg, const char *key,
			   const char *value)
{
	uint64_t was = cfg ? cfg->set_mask : 0;
	int r = hvm_config_set(cfg, key, value);

	if (r == 0)
		cfg->set_mask = was; /* still open to files and later sets */
	return r;
}

int hvm_config_set_console_fds(struct hvm_config *cfg, int in_fd, int out_fd)
{
	if (!cfg || in_fd < -1 || out_fd < -1)
		return hvm_set_error(-EINVAL, "console fds must be >= -1");
	cfg->console_in_fd = in_fd;
	cfg->console_out_fd = out_fd;
	return 0;
}

int hvm_config_set_agent_stdio_fds(struct hvm_config *cfg, int in_fd,
				   int out_fd, int err_fd)
{
	bool none = in_fd == -1 && out_fd == -1 && err_fd == -1;

	if (!cfg || (!none && (in_fd < 0 || out_fd < 0 || err_fd < 0)))
		return hvm_set_error(
			-EINVAL,
			"agent stdio fds: give all three (>= 0) or none (-1 each), not %d %d %d",
			in_fd, out_fd, err_fd);
	cfg->agent_stdio_fd[0] = in_fd;
	cfg->agent_stdio_fd[1] = out_fd;
	cfg->agent_stdio_fd[2] = err_fd;
	return 0;
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

/* Config files nest at most this deep (a file including itself stops). */
#define MAX_CONFIG_DEPTH 4

/* A regular file (a FIFO would hang fopen() forever), as a stream. */
static FILE *open_config(const char *path)
{
	struct stat st;
	FILE *f;
	int fd = open_host_input(path, O_RDONLY | O_CLOEXEC, &st);

	if (fd < 0) {
		errno = -fd;
		hvm_set_errno_error("cannot read config file %s", path);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		hvm_set_error(-EINVAL, "config file %s is not a regular file",
			      path);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		hvm_set_errno_error("cannot read config file %s", path);
		close(fd);
	}
	return f;
}

int hvm_config_load_file(struct hvm_config *cfg, const char *path)
{
	static _Thread_local int depth;
	char line[4096];
	unsigned int lineno = 0;
	FILE *f;
	int r = 0;

	if (depth >= MAX_CONFIG_DEPTH)
		return hvm_set_error(-ELOOP,
				     "%s: config files nest more than %d deep",
				     path, MAX_CONFIG_DEPTH);
	f = open_config(path);
	if (!f)
		return -EINVAL; /* the reason is in hvm_error_message() */
	depth++;
	while (fgets(line, sizeof(line), f)) {
		char *key, *value, *eq, *hash;
		const struct option_def *opt;
		size_t index;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			r = hvm_set_error(-EINVAL,
					  "%s:%u: line longer than %zu bytes",
					  path, lineno, sizeof(line) - 2);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		value = NULL;
		if (eq) {
			*eq = '\0';
			value = trim(eq + 1);
			key = trim(key);
		}
		if (!strncmp(key, "--", 2))
			key += 2;
		opt = find_option(key, &index);
		if (!opt) {
			r = hvm_set_error(
				-EINVAL,
				"%s:%u: unknown option '%s'; expected 'option = value' with a long option name of hintvm run",
				path, lineno, key);
			break;
		}
		if (opt->info.arg && !eq) {
			r = hvm_set_error(
				-EINVAL,
				"%s:%u: option '%s' needs a value ('%s = %s')",
				path, lineno, key, key, opt->info.arg);
			break;
		}
		if (cfg->set_mask & (1ULL << index))
			continue; /* the command line (or caller) wins */
		r = opt->parse(cfg, key, value);
		if (r < 0) {
			/* hvm_set_error copies its arguments before writing. */
			hvm_set_error(r, "%s:%u: %s", path, lineno,
				      hvm_error_message());
			break;
		}
		/* Mark so that a later file cannot override this one either. */
		cfg->set_mask |= 1ULL << index;
	}
	if (!r && ferror(f))
		r = hvm_set_error(-EIO, "error reading config file %s", path);
	depth--;
	fclose(f);
	return r;
}

uint64_t host_memory_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return UINT64_MAX;
	return (uint64_t)si.totalram * si.mem_unit;
}

const char *config_console_name(enum console_kind kind)
{
	switch (kind) {
	case CONSOLE_SERIAL:
		return "serial";
	case CONSOLE_VIRTIO:
		return "virtio";
	case CONSOLE_NONE:
		return "none";
	}
	return "?";
}
