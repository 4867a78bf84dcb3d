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
#include "sched/sched_config.h"

/* Optional vCPU features (--cpu-features); arm64 only for now. */
#define CPU_FEATURE_PMU (1u << 0)
#define CPU_FEATURE_SVE (1u << 1)
#define CPU_FEATURE_PAUTH (1u << 2)

enum console_kind { CONSOLE_SERIAL, CONSOLE_NONE, CONSOLE_VIRTIO };

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
};

struct hvm_net_config {
	char *tap; /* interface name */
	uint8_t mac[6];
	bool mac_set; /* else a fixed locally administered default */
};

struct hvm_config {
	char *kernel; /* NULL: the built-in test kernel */
	char *initrd;
	char *cmdline;
	unsigned int cpus;
	uint64_t mem; /* bytes */
	bool hugepages;
	bool mem_overcommit;
	enum console_kind console;
	int console_in_fd;
	int console_out_fd;
	int verbosity;
	char *kvm_path;
	bool rr_partner; /* the rr benchmark's host-side partner device */
	enum irqchip_mode irqchip;
	char *dtb_dump; /* arm64: write the generated device tree here */
	uint32_t cpu_features; /* arm64: CPU_FEATURE_* (--cpu-features) */
	char *control_path; /* --control: Unix socket, NULL for none */
	struct hvm_disk_config disks[HVM_MAX_DISKS];
	unsigned int nr_disks;
	struct hvm_net_config nets[HVM_MAX_NETS];
	unsigned int nr_nets;
	bool rng; /* virtio-rng fed from getrandom(2) */
	struct sched_options sched; /* --pin, --halt-poll, --pv, --stats... */
	/* Which options were set explicitly: a config file never overrides. */
	uint64_t set_mask;
};

/* Defaults: 1 vCPU, 256 MiB, serial console on stdio. */
void config_init_defaults(struct hvm_config *cfg);

/* Deep copy (the VM keeps its own). Returns NULL on ENOMEM. */
struct hvm_config *config_dup(const struct hvm_config *cfg);
void config_free_fields(struct hvm_config *cfg);

/* Parse "512M", "2G", "1024" (MiB) ... into bytes; -EINVAL if malformed. */
int parse_size(const char *s, uint64_t *bytes);

/* Parse a decimal unsigned integer in [MIN, MAX]; -EINVAL / -ERANGE. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Parse on/off, yes/no, true/false, 1/0 (NULL means on). */
int parse_bool(const char *s, bool *out);

/* Host RAM in bytes (for the "more memory than the host has" check). */
uint64_t host_memory_bytes(void);

#endif
