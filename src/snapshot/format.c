// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The snapshot state file: writer and validating parser (format.h,
 * docs/snapshot.md). The parser is fuzzed (tests/fuzz/fuzz_snapshot.c):
 * a state file is as hostile as guest memory, since whoever can write it
 * chooses the registers a restored VM runs with.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <linux/kvm.h>
#endif

#include "base/log.h"
#include "snapshot/format.h"

enum snap_arch snap_host_arch(void)
{
#if defined(__x86_64__)
	return SNAP_ARCH_X86_64;
#else
	return SNAP_ARCH_ARM64;
#endif
}

const char *snap_arch_name(uint32_t arch)
{
	switch (arch) {
	case SNAP_ARCH_X86_64:
		return "x86_64";
	case SNAP_ARCH_ARM64:
		return "arm64";
	}
	return "unknown";
}

/*
 * What each section type may be: its length between MIN and MAX, a
 * multiple of UNIT, whether it is per vCPU (instance = vCPU index) and
 * the highest instance otherwise. Types of the other architecture are
 * absent, so its sections are refused as unknown.
 */
struct section_rule {
	uint32_t type;
	const char *name;
	size_t min, max, unit;
	bool per_vcpu;
	uint32_t max_instance;
};

#define EXACT(t, n, size)                     \
	{                                     \
		t, n, size, size, 1, false, 0 \
	}
#define VCPU_EXACT(t, n, size)               \
	{                                    \
		t, n, size, size, 1, true, 0 \
	}

static const struct section_rule rules[] = {
	{ SNAP_SEC_CONFIG, "config", 1, 64 << 10, 1, false, 0 },
	EXACT(SNAP_SEC_MEMORY, "memory", sizeof(struct snap_memory)),
	{ SNAP_SEC_DEVICE, "device", sizeof(struct snap_device_header),
	  64 << 10, 1, false, 255 },
#if defined(__x86_64__)
	/* KVM's limit on CPUID entries is 256 (KVM_MAX_CPUID_ENTRIES). */
	{ SNAP_SEC_CPUID, "cpuid", sizeof(struct kvm_cpuid_entry2),
	  256 * sizeof(struct kvm_cpuid_entry2),
	  sizeof(struct kvm_cpuid_entry2), false, 0 },
	EXACT(SNAP_SEC_VM_CLOCK, "vm-clock", sizeof(struct kvm_clock_data)),
	/* Instances: KVM_IRQCHIP_PIC_MASTER, _PIC_SLAVE, _IOAPIC. */
	{ SNAP_SEC_IRQCHIP, "irqchip", sizeof(struct kvm_irqchip),
	  sizeof(struct kvm_irqchip), 1, false, KVM_IRQCHIP_IOAPIC },
	EXACT(SNAP_SEC_PIT, "pit", sizeof(struct kvm_pit_state2)),
	{ SNAP_SEC_IOAPIC, "ioapic", 8, 4096, 1, false, 0 },
	VCPU_EXACT(SNAP_SEC_VCPU_REGS, "vcpu-regs", sizeof(struct kvm_regs)),
	VCPU_EXACT(SNAP_SEC_VCPU_SREGS, "vcpu-sregs", sizeof(struct kvm_sregs)),
	/* KVM reports a few hundred MSRs at most; 1024 bounds the file. */
	{ SNAP_SEC_VCPU_MSRS, "vcpu-msrs", 0,
	  1024 * sizeof(struct kvm_msr_entry), sizeof(struct kvm_msr_entry),
	  true, 0 },
	/* The legacy 4 KiB region, or KVM_GET_XSAVE2's (AMX: ~11 KiB). */
	{ SNAP_SEC_VCPU_XSAVE, "vcpu-xsave", sizeof(struct kvm_xsave), 1 << 20,
	  4, true, 0 },
	VCPU_EXACT(SNAP_SEC_VCPU_XCRS, "vcpu-xcrs", sizeof(struct kvm_xcrs)),
	VCPU_EXACT(SNAP_SEC_VCPU_LAPIC, "vcpu-lapic",
		   sizeof(struct kvm_lapic_state)),
	VCPU_EXACT(SNAP_SEC_VCPU_EVENTS, "vcpu-events",
		   sizeof(struct kvm_vcpu_events)),
	VCPU_EXACT(SNAP_SEC_VCPU_MP_STATE, "vcpu-mp-state",
		   sizeof(struct kvm_mp_state)),
	VCPU_EXACT(SNAP_SEC_VCPU_DEBUGREGS, "vcpu-debugregs",
		   sizeof(struct kvm_debugregs)),
#endif
};

/* Sections every vCPU has on this architecture, and every file has once. */
static const uint32_t required_vcpu[] = {
#if defined(__x86_64__)
	SNAP_SEC_VCPU_REGS,	SNAP_SEC_VCPU_SREGS, SNAP_SEC_VCPU_MSRS,
	SNAP_SEC_VCPU_XSAVE,	SNAP_SEC_VCPU_LAPIC, SNAP_SEC_VCPU_EVENTS,
	SNAP_SEC_VCPU_MP_STATE,
#endif
};
static const uint32_t required_once[] = { SNAP_SEC_CONFIG, SNAP_SEC_MEMORY };

static const struct section_rule *rule_for(uint32_t type)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].type == type)
			return &rules[i];
	return NULL;
}

const char *snap_section_name(uint32_t type)
{
	const struct section_rule *r = rule_for(type);

	return r ? r->name : NULL;
}

/* ---- CRC-32 ---- */

/* Bitwise, reflected polynomial 0xedb88320: a few ms per MiB is plenty
 * for a state file of some KiB per vCPU; guest memory is not summed. */
uint32_t snap_crc32(const uint8_t *data, size_t len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		crc ^= data[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* ---- the on-disk header ---- */

/*
 * Offsets in the 64-byte header (docs/snapshot.md lists the same):
 *   0 magic[8]  8 version  12 arch  16 header_len  20 nr_sections
 *  24 file_len (u64)  32 body_crc32  36 flags  40 cpu_vendor[12]
 *  52 cpu_signature  56 kvm_api_version  60 xsave_size
 */
enum {
	H_MAGIC = 0,
	H_VERSION = 8,
	H_ARCH = 12,
	H_HEADER_LEN = 16,
	H_NR_SECTIONS = 20,
	H_FILE_LEN = 24,
	H_CRC = 32,
	H_FLAGS = 36,
	H_VENDOR = 40,
	H_SIGNATURE = 52,
	H_KVM_API = 56,
	H_XSAVE = 60,
};

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static size_t padded(size_t len)
{
	return (len + SNAP_ALIGN - 1) & ~(size_t)(SNAP_ALIGN - 1);
}

/* ---- parser ---- */

static int bad(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const char *path, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hvm_set_error(-EINVAL, "snapshot %s: %s", path, what);
}

static int parse_header(const uint8_t *buf, size_t len, const char *path,
			struct snap_file *out, uint32_t *nr_sections)
{
	uint32_t arch, header_len, flags, crc;
	uint64_t file_len;

	if (len < SNAP_HEADER_LEN)
		return bad(
			path,
			"truncated: %zu bytes, shorter than the %d-byte header",
			len, SNAP_HEADER_LEN);
	if (memcmp(buf + H_MAGIC, SNAP_MAGIC, SNAP_MAGIC_LEN))
		return bad(
			path,
			"not a hintvm snapshot (no \"HVMSNAP\" magic at the start)");
	out->version = get32(buf + H_VERSION);
	if (out->version != SNAP_VERSION)
		return bad(
			path,
			"format version %u, but this hintvm reads version %d only%s",
			out->version, SNAP_VERSION,
			out->version < SNAP_VERSION
				? " (an older hintvm wrote it: snapshot the VM again, or restore it with that hintvm)"
				: "");
	arch = get32(buf + H_ARCH);
	if (arch != snap_host_arch())
		return bad(path,
			   "taken on architecture %s (%u), but this host is %s",
			   snap_arch_name(arch), arch,
			   snap_arch_name(snap_host_arch()));
	out->arch = arch;
	header_len = get32(buf + H_HEADER_LEN);
	if (header_len != SNAP_HEADER_LEN)
		return bad(path, "header length %u, expected %d", header_len,
			   SNAP_HEADER_LEN);
	file_len = get64(buf + H_FILE_LEN);
	if (file_len > len)
		return bad(
			path,
			"truncated: the header says %llu bytes, the file has %zu",
			(unsigned long long)file_len, len);
	if (file_len < len)
		return bad(
			path,
			"%zu bytes after the end the header gives (%llu bytes)",
			len - (size_t)file_len, (unsigned long long)file_len);
	flags = get32(buf + H_FLAGS);
	if (flags)
		return bad(path, "flags 0x%x set, expected 0", flags);
	crc = snap_crc32(buf + SNAP_HEADER_LEN, len - SNAP_HEADER_LEN);
	if (crc != get32(buf + H_CRC))
		return bad(
			path,
			"corrupt: the CRC-32 of its body is 0x%08x, the header says 0x%08x",
			crc, get32(buf + H_CRC));
	*nr_sections = get32(buf + H_NR_SECTIONS);
	if (*nr_sections > SNAP_MAX_SECTIONS)
		return bad(path, "%u sections, at most %d expected",
			   *nr_sections, SNAP_MAX_SECTIONS);
	memcpy(out->identity.cpu_vendor, buf + H_VENDOR,
	       sizeof(out->identity.cpu_vendor));
	out->identity.cpu_signature = get32(buf + H_SIGNATURE);
	out->identity.kvm_api_version = get32(buf + H_KVM_API);
	out->identity.xsave_size = get32(buf + H_XSAVE);
	return 0;
}

static int check_section(const char *path, const struct snap_file *f,
			 const struct snap_section *s, size_t index)
{
	const struct section_rule *r = rule_for(s->type);

	if (!r)
		return bad(path, "section %zu has unknown type %u", index,
			   s->type);
	if (s->len < r->min || s->len > r->max || s->len % r->unit)
		return bad(
			path,
			"section %zu (%s, instance %u) is %zu bytes; expected %zu to %zu in units of %zu",
			index, r->name, s->instance, s->len, r->min, r->max,
			r->unit);
	if (r->per_vcpu ? s->instance >= SNAP_MAX_VCPUS
			: s->instance > r->max_instance)
		return bad(
			path,
			"section %zu (%s) has instance %u, at most %u expected",
			index, r->name, s->instance,
			r->per_vcpu ? SNAP_MAX_VCPUS - 1 : r->max_instance);
	if (s->type == SNAP_SEC_VCPU_XSAVE && f->identity.xsave_size &&
	    s->len != f->identity.xsave_size)
		return bad(
			path,
			"section %zu (vcpu-xsave) is %zu bytes, the header says %u",
			index, s->len, f->identity.xsave_size);
	if (s->type == SNAP_SEC_CONFIG) {
		for (size_t i = 0; i < s->len; i++)
			if ((s->data[i] < 0x20 || s->data[i] > 0x7e) &&
			    s->data[i] != '\n')
				return bad(
					path,
					"the config section has byte 0x%02x at offset %zu; expected printable text",
					s->data[i], i);
		if (s->data[s->len - 1] != '\n')
			return bad(
				path,
				"the config section does not end with a newline");
	}
	if (s->type == SNAP_SEC_MEMORY) {
		uint64_t size = get64(s->data);

		if (!size || size % 4096 || size > (1ull << 46))
			return bad(
				path,
				"memory size %llu is not a non-zero multiple of 4096 below 64 TiB",
				(unsigned long long)size);
	}
	if (s->type == SNAP_SEC_DEVICE) {
		const uint8_t *name = s->data;

		if (!memchr(name, 0, SNAP_DEVICE_NAME_LEN) || !name[0])
			return bad(
				path,
				"section %zu (device) has no NUL-terminated name",
				index);
		if (get32(s->data + SNAP_DEVICE_NAME_LEN + 4))
			return bad(
				path,
				"section %zu (device %s) has a non-zero reserved field",
				index, (const char *)name);
	}
	for (size_t i = 0; i < index; i++)
		if (f->sections[i].type == s->type &&
		    f->sections[i].instance == s->instance &&
		    s->type != SNAP_SEC_DEVICE)
			return bad(
				path,
				"section %s, instance %u, appears twice (sections %zu and %zu)",
				r->name, s->instance, i, index);
	return 0;
}

/* Every required section present; vCPUs numbered 0..n-1 without a gap. */
static int check_complete(const char *path, struct snap_file *f)
{
	/* A variable: clang warns of && on a constant (arm64: zero). */
	size_t nr_required = sizeof(required_vcpu) / sizeof(required_vcpu[0]);
	uint32_t max_vcpu = 0;
	bool any = false;

	for (size_t i = 0; i < sizeof(required_once) / sizeof(required_once[0]);
	     i++)
		if (!snap_find(f, required_once[i], 0))
			return bad(path, "the %s section is missing",
				   snap_section_name(required_once[i]));
	for (size_t i = 0; i < f->nr_sections; i++) {
		const struct section_rule *r = rule_for(f->sections[i].type);

		if (r->per_vcpu) {
			any = true;
			if (f->sections[i].instance > max_vcpu)
				max_vcpu = f->sections[i].instance;
		}
	}
	f->nr_vcpus = any ? max_vcpu + 1 : 0;
	if (!f->nr_vcpus && nr_required)
		return bad(path, "no vCPU state in it");
	for (uint32_t v = 0; v < f->nr_vcpus; v++)
		for (size_t i = 0; i < nr_required; i++)
			if (!snap_find(f, required_vcpu[i], v))
				return bad(
					path,
					"vCPU %u has no %s section (%u vCPUs in the file)",
					v, snap_section_name(required_vcpu[i]),
					f->nr_vcpus);
	return 0;
}

int snap_parse(const uint8_t *buf, size_t len, const char *path,
	       struct snap_file *out)
{
	uint32_t nr = 0;
	size_t off = SNAP_HEADER_LEN;
	int r;

	memset(out, 0, sizeof(*out));
	if (len > SNAP_MAX_FILE)
		return bad(path,
			   "%zu bytes, more than the %u a state file may be",
			   len, SNAP_MAX_FILE);
	r = parse_header(buf, len, path, out, &nr);
	if (r < 0)
		return r;
	out->sections = calloc(nr ? nr : 1, sizeof(*out->sections));
	if (!out->sections)
		return hvm_set_error(-ENOMEM, "snapshot %s: out of memory",
				     path);
	for (uint32_t i = 0; i < nr; i++) {
		struct snap_section *s = &out->sections[i];
		uint64_t slen;

		if (len - off < SNAP_SECTION_HEADER_LEN) {
			r = bad(path,
				"truncated: section %u of %u starts at offset %zu, %zu bytes before the end",
				i, nr, off, len - off);
			goto fail;
		}
		s->type = get32(buf + off);
		s->instance = get32(buf + off + 4);
		slen = get64(buf + off + 8);
		off += SNAP_SECTION_HEADER_LEN;
		if (slen > len - off || padded((size_t)slen) > len - off) {
			r = bad(path,
				"truncated: section %u (type %u) claims %llu bytes at offset %zu, %zu are left",
				i, s->type, (unsigned long long)slen, off,
				len - off);
			goto fail;
		}
		s->len = (size_t)slen;
		s->data = buf + off;
		for (size_t p = off + s->len; p < off + padded(s->len); p++)
			if (buf[p]) {
				r = bad(path,
					"section %u has non-zero padding at offset %zu",
					i, p);
				goto fail;
			}
		off += padded(s->len);
		out->nr_sections = i + 1;
		r = check_section(path, out, s, i);
		if (r < 0)
			goto fail;
	}
	if (off != len) {
		r = bad(path, "%zu bytes after the last of its %u sections",
			len - off, nr);
		goto fail;
	}
	r = check_complete(path, out);
	if (r < 0)
		goto fail;
	return 0;
fail:
	snap_file_release(out);
	return r;
}

void snap_file_release(struct snap_file *f)
{
	free(f->sections);
	f->sections = NULL;
	f->nr_sections = 0;
}

const struct snap_section *snap_find(const struct snap_file *f, uint32_t type,
				     uint32_t instance)
{
	for (size_t i = 0; i < f->nr_sections; i++)
		if (f->sections[i].type == type &&
		    f->sections[i].instance == instance)
			return &f->sections[i];
	return NULL;
}

/* ---- writer ---- */

static bool reserve(struct snap_writer *w, size_t more)
{
	size_t cap = w->cap ? w->cap : 4096;
	uint8_t *buf;

	if (w->error)
		return false;
	if (more > SNAP_MAX_FILE - w->len) {
		w->error = hvm_set_error(
			-EFBIG, "the snapshot's state is over %u bytes",
			SNAP_MAX_FILE);
		return false;
	}
	while (cap < w->len + more)
		cap *= 2;
	if (cap == w->cap)
		return true;
	buf = realloc(w->buf, cap);
	if (!buf) {
		w->error = hvm_set_error(-ENOMEM,
					 "out of memory for the snapshot");
		return false;
	}
	memset(buf + w->cap, 0, cap - w->cap);
	w->buf = buf;
	w->cap = cap;
	return true;
}

int snap_writer_init(struct snap_writer *w, const struct snap_identity *id)
{
	memset(w, 0, sizeof(*w));
	if (!reserve(w, SNAP_HEADER_LEN))
		return w->error;
	memcpy(w->buf + H_MAGIC, SNAP_MAGIC, SNAP_MAGIC_LEN);
	put32(w->buf + H_VERSION, SNAP_VERSION);
	put32(w->buf + H_ARCH, snap_host_arch());
	put32(w->buf + H_HEADER_LEN, SNAP_HEADER_LEN);
	memcpy(w->buf + H_VENDOR, id->cpu_vendor, sizeof(id->cpu_vendor));
	put32(w->buf + H_SIGNATURE, id->cpu_signature);
	put32(w->buf + H_KVM_API, id->kvm_api_version);
	put32(w->buf + H_XSAVE, id->xsave_size);
	w->len = SNAP_HEADER_LEN;
	return 0;
}

void snap_writer_add2(struct snap_writer *w, uint32_t type, uint32_t instance,
		      const void *a, size_t alen, const void *b, size_t blen)
{
	size_t len = alen + blen;

	if (!reserve(w, SNAP_SECTION_HEADER_LEN + padded(len)))
		return;
	put32(w->buf + w->len, type);
	put32(w->buf + w->len + 4, instance);
	put64(w->buf + w->len + 8, len);
	w->len += SNAP_SECTION_HEADER_LEN;
	if (alen)
		memcpy(w->buf + w->len, a, alen);
	if (blen)
		memcpy(w->buf + w->len + alen, b, blen);
	w->len += padded(len); /* the padding is zero: reserve() cleared it */
	w->nr_sections++;
}

void snap_writer_add(struct snap_writer *w, uint32_t type, uint32_t instance,
		     const void *data, size_t len)
{
	snap_writer_add2(w, type, instance, data, len, NULL, 0);
}

int snap_writer_finish(struct snap_writer *w)
{
	if (w->error)
		return w->error;
	put32(w->buf + H_NR_SECTIONS, w->nr_sections);
	put64(w->buf + H_FILE_LEN, w->len);
	put32(w->buf + H_CRC,
	      snap_crc32(w->buf + SNAP_HEADER_LEN, w->len - SNAP_HEADER_LEN));
	return 0;
}

void snap_writer_release(struct snap_writer *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}
