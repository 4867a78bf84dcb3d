/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The snapshot's state file (docs/snapshot.md): a fixed header (magic,
 * format version, architecture, the CPU and KVM it was taken on, the
 * file's length and a CRC-32 of its body), then typed, length-prefixed
 * sections. This file is the format alone: building one in memory and
 * parsing one back with every field checked. It knows no VM; the save and
 * restore sides (src/vmm/snapshot_*.c, the arch) fill and read sections.
 *
 * All integers are little-endian on disk (both architectures hintvm runs
 * on are); the parser never trusts a length before checking it against
 * what is left of the file.
 */
#ifndef HVM_SNAPSHOT_FORMAT_H
#define HVM_SNAPSHOT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_MAGIC "HVMSNAP\0"
#define SNAP_MAGIC_LEN 8
#define SNAP_VERSION 2
#define SNAP_HEADER_LEN 64
#define SNAP_SECTION_HEADER_LEN 16
/* Sections start 8-byte aligned; the padding is zero. */
#define SNAP_ALIGN 8
/* Bounds that keep a hostile file from asking for absurd allocations. */
#define SNAP_MAX_SECTIONS 4096
#define SNAP_MAX_FILE (64u << 20)
#define SNAP_MAX_VCPUS 1024

/* The names of the files in a snapshot directory. */
#define SNAP_STATE_FILE "state"
#define SNAP_MEMORY_FILE "memory"

enum snap_arch {
	SNAP_ARCH_X86_64 = 1,
	SNAP_ARCH_ARM64 = 2,
};

/* The architecture this build runs (and writes snapshots for). */
enum snap_arch snap_host_arch(void);
const char *snap_arch_name(uint32_t arch);

/*
 * Section types. Per-vCPU sections carry the vCPU index as their
 * instance; device sections the device's index in the walk. A new type
 * gets a row in the rule table of format.c (its size rule) and a line
 * in docs/snapshot.md; a parser refuses a type it does not know, so a
 * file from a newer hintvm is refused rather than half restored.
 */
enum snap_section_type {
	SNAP_SEC_CONFIG = 1, /* the VM's options, "key=value\n" lines */
	SNAP_SEC_MEMORY = 2, /* struct snap_memory */
	SNAP_SEC_CPUID = 3, /* the CPUID the vCPUs got: kvm_cpuid_entry2[] */
	SNAP_SEC_VM_CLOCK = 4, /* struct kvm_clock_data */
	SNAP_SEC_IRQCHIP = 5, /* instance: KVM_IRQCHIP_*; struct kvm_irqchip */
	SNAP_SEC_PIT = 6, /* struct kvm_pit_state2 */
	SNAP_SEC_IOAPIC = 7, /* the userspace I/O APIC (split irqchip) */

	SNAP_SEC_VCPU_REGS = 16, /* struct kvm_regs */
	SNAP_SEC_VCPU_SREGS = 17, /* struct kvm_sregs */
	SNAP_SEC_VCPU_MSRS = 18, /* struct kvm_msr_entry[] */
	SNAP_SEC_VCPU_XSAVE = 19, /* KVM_GET_XSAVE(2)'s region */
	SNAP_SEC_VCPU_XCRS = 20, /* struct kvm_xcrs */
	SNAP_SEC_VCPU_LAPIC = 21, /* struct kvm_lapic_state */
	SNAP_SEC_VCPU_EVENTS = 22, /* struct kvm_vcpu_events */
	SNAP_SEC_VCPU_MP_STATE = 23, /* struct kvm_mp_state */
	SNAP_SEC_VCPU_DEBUGREGS = 24, /* struct kvm_debugregs */

	SNAP_SEC_DEVICE = 64, /* struct snap_device_header, then its state */
};

/* SNAP_SEC_MEMORY: the guest RAM mapping the memory file holds. */
struct snap_memory {
	uint64_t mapping_size; /* bytes; the memory file is this long */
	uint64_t pages_written; /* non-zero pages saved (informational) */
};

/* The header of a SNAP_SEC_DEVICE section's payload. */
#define SNAP_DEVICE_NAME_LEN 16
struct snap_device_header {
	char name[SNAP_DEVICE_NAME_LEN]; /* NUL-padded, e.g. "uart8250" */
	uint32_t version; /* the device's own state layout */
	uint32_t reserved; /* zero */
};

/* The host a snapshot was taken on, as far as restoring depends on it. */
struct snap_identity {
	char cpu_vendor[12]; /* x86: CPUID.0 vendor; arm64: zero */
	uint32_t cpu_signature; /* x86: CPUID.1.EAX; arm64: MIDR_EL1 */
	uint32_t kvm_api_version;
	uint32_t xsave_size; /* x86: the KVM_GET_XSAVE2 size; else 0 */
};

/* One section of a parsed file: points into the caller's buffer. */
struct snap_section {
	uint32_t type;
	uint32_t instance;
	const uint8_t *data;
	size_t len;
};

struct snap_file {
	uint32_t version;
	uint32_t arch;
	struct snap_identity identity;
	uint32_t nr_vcpus; /* the highest per-vCPU instance + 1 */
	size_t nr_sections;
	struct snap_section *sections; /* malloc'ed; snap_file_release */
};

/*
 * Parse the state file in BUF (LEN bytes) that was read from PATH (used in
 * every message). Checks the magic, version, architecture against this
 * build's, header and file length, the CRC-32, then each section: its type
 * is known, its length fits what is left and obeys its type's size rule,
 * its padding is zero, and the sections every snapshot has are there once
 * (config, memory; per vCPU the register sections, vCPUs numbered from 0
 * without a gap). Returns 0, or -EINVAL with a message naming PATH and what
 * is wrong (hvm_error_message()). Never reads outside BUF.
 */
int snap_parse(const uint8_t *buf, size_t len, const char *path,
	       struct snap_file *out);
void snap_file_release(struct snap_file *f);

/* The first section of TYPE and INSTANCE, or NULL. */
const struct snap_section *snap_find(const struct snap_file *f, uint32_t type,
				     uint32_t instance);

/* A state file being built in memory. */
struct snap_writer {
	uint8_t *buf;
	size_t len;
	size_t cap;
	uint32_t nr_sections;
	int error; /* the first -errno; sticky */
};

/* Start one with the header's fields for this host (IDENTITY). */
int snap_writer_init(struct snap_writer *w, const struct snap_identity *id);
/* Append a section; errors are sticky and reported by snap_writer_finish. */
void snap_writer_add(struct snap_writer *w, uint32_t type, uint32_t instance,
		     const void *data, size_t len);
/* Two-part payload (a device header and its state) without a copy. */
void snap_writer_add2(struct snap_writer *w, uint32_t type, uint32_t instance,
		      const void *a, size_t alen, const void *b, size_t blen);
/* Fill in the length, count and CRC; 0 or the first error. */
int snap_writer_finish(struct snap_writer *w);
void snap_writer_release(struct snap_writer *w);

/* The CRC-32 (IEEE 802.3, as zlib's crc32()) of LEN bytes at DATA. */
uint32_t snap_crc32(const uint8_t *data, size_t len);

/* A section type's name for messages ("vcpu-regs"), or NULL if unknown. */
const char *snap_section_name(uint32_t type);

#endif
