/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VM configuration behind the public hvm_config handle, and the one
 * option table from which the command line, config files and the embedding
 * API are all parsed and validated.
 */
#ifndef HVM_CORE_CONFIG_H
#define HVM_CORE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "hintvm/hintvm.h"

struct sched_options; /* sched/sched_config.h */

/* Optional vCPU features (--cpu-features); arm64 only for now. */
#define CPU_FEATURE_PMU (1u << 0)
#define CPU_FEATURE_SVE (1u << 1)
#define CPU_FEATURE_PAUTH (1u << 2)

enum console_kind { CONSOLE_SERIAL, CONSOLE_NONE, CONSOLE_VIRTIO };
/* KIND as --console spells it ("serial", "virtio", "none"). */
const char *config_console_name(enum console_kind kind);

/*
 * x86 interrupt controllers (--irqchip): split (LAPICs in KVM, the I/O APIC
 * in hintvm, no PIC, no PIT) or kernel (KVM's LAPICs, I/O APIC, PICs and
 * PIT). AUTO is split where KVM offers it, else kernel.
 */
enum irqchip_mode { IRQCHIP_AUTO, IRQCHIP_SPLIT, IRQCHIP_KERNEL };

/* virtio devices (src/devices/virtio), one entry per --disk / --net. */
#define HVM_MAX_DISKS 8
#define HVM_MAX_NETS 4

struct hvm_disk_config {
	char *path;
	bool readonly;
	bool direct; /* O_DIRECT: bypass the host page cache */
	bool no_lock; /* lock=off: no flock, no QEMU-style byte-range locks */
	uint64_t iops; /* iops=N: requests per second, 0 unlimited */
	uint64_t bw; /* bw=BYTES[/s]: bytes per second, 0 unlimited */
};

/*
 * --share HOSTDIR,tag=TAG[,ro][,ids=mapped][,server=thread|process|auto]:
 * virtio-9p (docs/shares.md).
 */
#define HVM_MAX_SHARES 8

enum hvm_share_server {
	/* a process when the VM's threads switch user (--user), else threads */
	HVM_SHARE_SERVER_AUTO,
	HVM_SHARE_SERVER_THREAD, /* the VMM's own 9P worker threads */
	HVM_SHARE_SERVER_PROCESS, /* a file-server process (needs root) */
};

struct hvm_share_config {
	char *path; /* the host directory */
	char *tag; /* the guest's mount tag */
	bool readonly;
	bool ids_mapped; /* guest ownership in user.hintvm.* xattrs */
	enum hvm_share_server server;
};

struct hvm_net_config {
	char *tap; /* interface name */
	uint8_t mac[6];
	bool mac_set; /* else a fixed locally administered default */
	uint64_t bw; /* bw=BYTES[/s] each way, 0 unlimited */
};

/* --vsock cid=N[,uds=PATH]: virtio-vsock, at most one per VM. */
struct hvm_vsock_config {
	bool enabled;
	uint64_t cid; /* the guest's CID: 3 to 2^32-2 */
	char *uds; /* hybrid socket path; NULL: hintvm's own services only */
};

/*
 * Options only one architecture reads (src/arch/<arch>), kept apart so that
 * the common config does not grow arch fields. Parsed on every
 * architecture, so that an option file works anywhere.
 */
struct hvm_arch_config {
	char *dtb_dump; /* arm64: write the generated device tree here */
	uint32_t cpu_features; /* arm64: CPU_FEATURE_* (--cpu-features) */
	bool rr_partner; /* x86: the rr benchmark's host-side partner */
	enum irqchip_mode irqchip; /* x86: --irqchip */
};

/*
 * --guest-objects default: room for 512 vsock connections with full
 * buffers, or tens of thousands of 9P fids; what one guest can make the
 * VMM grow by, whatever it asks.
 */
#define HVM_DEFAULT_GUEST_OBJECTS (64ULL << 20)

struct hvm_config {
	char *kernel; /* NULL: the built-in test kernel */
	char *initrd;
	char *cmdline;
	unsigned int cpus;
	uint64_t mem; /* bytes */
	/* Host memory the guest may make hintvm allocate (base/budget.h). */
	uint64_t guest_objects; /* bytes */
	bool hugepages;
	bool mem_overcommit;
	enum console_kind console;
	int console_in_fd;
	int console_out_fd;
	int verbosity;
	char *kvm_path;
	/* --restore DIR: build the VM from this snapshot (docs/snapshot.md). */
	char *restore;
	/* --template KEY|auto, --template-dir DIR (docs/template.md). */
	char *template_key;
	char *template_dir;
	char *name; /* --name; NULL: generated when the VM starts */
	char *control_path; /* --control PATH; NULL: in the runtime directory */
	bool control_none; /* --control none: no control socket at all */
	struct hvm_disk_config disks[HVM_MAX_DISKS];
	unsigned int nr_disks;
	struct hvm_net_config nets[HVM_MAX_NETS];
	unsigned int nr_nets;
	bool rng; /* virtio-rng fed from getrandom(2) */
	/* Sandbox (src/sandbox/sandbox.c, docs/sandbox.md). */
	bool sandbox; /* --sandbox: off in the library, on in hintvm run */
	bool sandbox_if_supported; /* --sandbox auto: off without seccomp */
	char *jail_dir; /* --jail DIR: new root (vmm/jail.c); NULL: none */
	uint64_t jail_nofile; /* ,nofile=N: RLIMIT_NOFILE in the jail */
	uint64_t jail_memlock; /* ,memlock=SIZE: RLIMIT_MEMLOCK in the jail */
	char *cgroup_path; /* --cgroup PATH: cgroup directory to join */
	/*
	 * --core-sched (sandbox/core_sched.h): OFF, the kernel's default;
	 * VM: one cookie for every thread of the VM; VCPU: that, and each
	 * vCPU thread a cookie of its own.
	 */
	enum hvm_core_sched {
		HVM_CORE_SCHED_OFF,
		HVM_CORE_SCHED_VM,
		HVM_CORE_SCHED_VCPU,
	} core_sched;
	/*
	 * --user (src/sandbox/identity.c): who the VM's threads are once set
	 * up. NONE: whoever started it (the library's default); AUTO: when
	 * started as root, a uid/gid of its own from user_first..user_last
	 * (hintvm run's default); ID: user_uid:user_gid.
	 */
#define HVM_USER_RANGE_FIRST 1879048192u
#define HVM_USER_RANGE_LAST (HVM_USER_RANGE_FIRST + 65535u)
	enum { HVM_USER_NONE, HVM_USER_AUTO, HVM_USER_ID } user_mode;
	uint32_t user_uid, user_gid;
	uint32_t user_first, user_last; /* --user-range FIRST-LAST */
	struct hvm_vsock_config vsock; /* --vsock */
	/* The guest agent (docs/agent.md): --agent, --agent-modules,
	 * --init-args, and the initramfs the builder found for it. */
	bool agent;
	char *agent_modules; /* NULL: /lib/modules/<the kernel's version> */
	char *init_args; /* appended as " -- ARGS" to the kernel command line */
	char *agent_initrd; /* set by the builder: loaded before --initrd */
	/* The main process's stdin/stdout/stderr over vsock, or -1s. */
	int agent_stdio_fd[3];
	struct hvm_share_config shares[HVM_MAX_SHARES];
	unsigned int nr_shares;
	struct hvm_arch_config arch; /* --cpu-features, --dtb-dump, ... */
	/* --pin, --halt-poll, --pv, --stats...: owned by the config. */
	struct sched_options *sched;
	/* Which options were set explicitly: a config file never overrides. */
	uint64_t set_mask;
};

/*
 * Defaults: 1 vCPU, 256 MiB, serial console on stdio. Allocates the
 * option sub-structs: -ENOMEM, or 0; config_free_fields() frees them.
 */
int config_init_defaults(struct hvm_config *cfg);

/* Deep copy (the VM keeps its own). Returns NULL on ENOMEM. */
struct hvm_config *config_dup(const struct hvm_config *cfg);
/* --core-sched's value as the option spells it: "off", "vm", "vcpu". */
const char *config_core_sched_name(enum hvm_core_sched mode);
void config_free_fields(struct hvm_config *cfg);

/* Host RAM in bytes (for the "more memory than the host has" check). */
uint64_t host_memory_bytes(void);

#endif
