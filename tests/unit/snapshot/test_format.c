// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The snapshot state file (src/snapshot/format.c): what the writer makes
 * parses back; each way a file can be bad (truncated, corrupt, another
 * version or architecture, a section of the wrong size, a missing or
 * repeated section, a vCPU gap) is refused with a message that names the
 * file and what is wrong.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/kvm.h>

#include "base/log.h"
#include "devices/virtio/virtio_blk.h"
#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_net.h"
#include "devices/virtio/virtio_pci.h"
#include "devices/virtio/virtio_vsock.h"
#include "snapshot/format.h"

#define PATH "/snap/state"

static const struct snap_identity id = { "GenuineIntel", 0x806f8, 12, 4096 };

/* A complete file for NR vCPUs; SKIP: a section type left out of vCPU 1. */
static struct snap_writer make(unsigned int nr, uint32_t skip)
{
	static uint8_t zero[8192];
	struct snap_memory mem = { .mapping_size = 1 << 20 };
	struct snap_device_header dev = { .name = "uart8250", .version = 1 };
	struct snap_writer w;

	assert_int_equal(snap_writer_init(&w, &id), 0);
	snap_writer_add(&w, SNAP_SEC_CONFIG, 0, "cpus=2\nmem=1M\n", 14);
	snap_writer_add(&w, SNAP_SEC_MEMORY, 0, &mem, sizeof(mem));
	for (unsigned int v = 0; v < nr; v++) {
		static const struct {
			uint32_t type;
			size_t len;
		} s[] = {
			{ SNAP_SEC_VCPU_REGS, sizeof(struct kvm_regs) },
			{ SNAP_SEC_VCPU_SREGS, sizeof(struct kvm_sregs) },
			{ SNAP_SEC_VCPU_MSRS,
			  3 * sizeof(struct kvm_msr_entry) },
			{ SNAP_SEC_VCPU_XSAVE, 4096 },
			{ SNAP_SEC_VCPU_LAPIC, sizeof(struct kvm_lapic_state) },
			{ SNAP_SEC_VCPU_EVENTS,
			  sizeof(struct kvm_vcpu_events) },
			{ SNAP_SEC_VCPU_MP_STATE, sizeof(struct kvm_mp_state) },
		};
		for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
			if (!(v == 1 && s[i].type == skip))
				snap_writer_add(&w, s[i].type, v, zero,
						s[i].len);
	}
	snap_writer_add2(&w, SNAP_SEC_DEVICE, 0, &dev, sizeof(dev), "abc", 3);
	assert_int_equal(snap_writer_finish(&w), 0);
	return w;
}

static void refix_crc(struct snap_writer *w)
{
	uint32_t crc =
		snap_crc32(w->buf + SNAP_HEADER_LEN, w->len - SNAP_HEADER_LEN);
	memcpy(w->buf + 32, &crc, 4);
}

static void expect_refused(const uint8_t *buf, size_t len, const char *what)
{
	struct snap_file f;

	assert_int_equal(snap_parse(buf, len, PATH, &f), -EINVAL);
	if (!strstr(hvm_error_message(), what) ||
	    strncmp(hvm_error_message(), "snapshot " PATH ": ", 17))
		fail_msg("expected '%s', got '%s'", what, hvm_error_message());
	assert_null(f.sections);
}

static void round_trip(void **state)
{
	struct snap_writer w = make(2, 0);
	const struct snap_section *s;
	struct snap_file f;

	assert_int_equal(snap_parse(w.buf, w.len, PATH, &f), 0);
	assert_int_equal(f.nr_vcpus, 2);
	assert_int_equal(f.identity.cpu_signature, 0x806f8);
	assert_memory_equal(f.identity.cpu_vendor, "GenuineIntel", 12);
	s = snap_find(&f, SNAP_SEC_DEVICE, 0);
	assert_non_null(s);
	assert_int_equal(s->len, sizeof(struct snap_device_header) + 3);
	assert_memory_equal(s->data + sizeof(struct snap_device_header), "abc",
			    3);
	assert_non_null(snap_find(&f, SNAP_SEC_VCPU_XSAVE, 1));
	snap_file_release(&f);
	snap_writer_release(&w);
}

static void truncated(void **state)
{
	struct snap_writer w = make(1, 0);

	expect_refused(w.buf, 10, "truncated: 10 bytes, shorter than");
	expect_refused(w.buf, w.len - 1, "truncated: the header says");
	snap_writer_release(&w);
}

static void trailing_bytes(void **state)
{
	struct snap_writer w = make(1, 0);
	uint8_t *big = calloc(1, w.len + 8);

	memcpy(big, w.buf, w.len);
	expect_refused(big, w.len + 8, "8 bytes after the end");
	free(big);
	snap_writer_release(&w);
}

static void bad_magic_version_arch(void **state)
{
	struct snap_writer w = make(1, 0);
	uint32_t v = 3;

	w.buf[0] = 'X';
	expect_refused(w.buf, w.len, "not a hintvm snapshot");
	w.buf[0] = 'H';
	memcpy(w.buf + 8, &v, 4);
	expect_refused(
		w.buf, w.len,
		"format version 3, but this hintvm reads version 2 only");
	v = 1; /* before the VM generation ID (device walk and acpi-pm) */
	memcpy(w.buf + 8, &v, 4);
	expect_refused(
		w.buf, w.len,
		"format version 1, but this hintvm reads version 2 only (an older hintvm wrote it: snapshot the VM again, or restore it with that hintvm)");
	v = SNAP_VERSION;
	memcpy(w.buf + 8, &v, 4);
	v = SNAP_ARCH_ARM64;
	memcpy(w.buf + 12, &v, 4);
	expect_refused(
		w.buf, w.len,
		"taken on architecture arm64 (2), but this host is x86_64");
	v = 77;
	memcpy(w.buf + 12, &v, 4);
	expect_refused(w.buf, w.len, "architecture unknown (77)");
	snap_writer_release(&w);
}

static void corrupt(void **state)
{
	struct snap_writer w = make(1, 0);

	w.buf[w.len - 9] ^= 0x40;
	expect_refused(w.buf, w.len, "corrupt: the CRC-32 of its body");
	snap_writer_release(&w);
}

static void wrong_section_size(void **state)
{
	struct snap_writer w = make(1, 0);
	/* The memory section's length field: header + config (16 + 16). */
	size_t at = SNAP_HEADER_LEN + 16 + 16 + 8;
	uint64_t len = 8;

	memcpy(w.buf + at, &len, 8);
	refix_crc(&w);
	expect_refused(w.buf, w.len, "(memory, instance 0) is 8 bytes");
	snap_writer_release(&w);
}

static void huge_section_length(void **state)
{
	struct snap_writer w = make(1, 0);
	size_t at = SNAP_HEADER_LEN + 8;
	uint64_t len = UINT64_MAX - 3;

	memcpy(w.buf + at, &len, 8);
	refix_crc(&w);
	expect_refused(w.buf, w.len, "truncated: section 0 (type 1) claims");
	snap_writer_release(&w);
}

static void unknown_type(void **state)
{
	struct snap_writer w = make(1, 0);
	uint32_t type = 999;

	memcpy(w.buf + SNAP_HEADER_LEN, &type, 4);
	refix_crc(&w);
	expect_refused(w.buf, w.len, "section 0 has unknown type 999");
	snap_writer_release(&w);
}

static void missing_vcpu_section(void **state)
{
	struct snap_writer w = make(2, SNAP_SEC_VCPU_LAPIC);

	expect_refused(
		w.buf, w.len,
		"vCPU 1 has no vcpu-lapic section (2 vCPUs in the file)");
	snap_writer_release(&w);
}

static void duplicate_and_missing(void **state)
{
	struct snap_writer w;
	struct snap_memory mem = { .mapping_size = 4096 };

	assert_int_equal(snap_writer_init(&w, &id), 0);
	snap_writer_add(&w, SNAP_SEC_MEMORY, 0, &mem, sizeof(mem));
	snap_writer_add(&w, SNAP_SEC_MEMORY, 0, &mem, sizeof(mem));
	assert_int_equal(snap_writer_finish(&w), 0);
	expect_refused(w.buf, w.len,
		       "section memory, instance 0, appears twice");
	snap_writer_release(&w);

	assert_int_equal(snap_writer_init(&w, &id), 0);
	snap_writer_add(&w, SNAP_SEC_MEMORY, 0, &mem, sizeof(mem));
	assert_int_equal(snap_writer_finish(&w), 0);
	expect_refused(w.buf, w.len, "the config section is missing");
	snap_writer_release(&w);
}

static void config_not_text(void **state)
{
	struct snap_writer w;

	assert_int_equal(snap_writer_init(&w, &id), 0);
	snap_writer_add(&w, SNAP_SEC_CONFIG, 0, "cpus=1\0\n", 8);
	assert_int_equal(snap_writer_finish(&w), 0);
	expect_refused(w.buf, w.len, "byte 0x00 at offset 6");
	snap_writer_release(&w);
}

static void bad_memory_size(void **state)
{
	struct snap_writer w;
	struct snap_memory mem = { .mapping_size = 4097 };

	assert_int_equal(snap_writer_init(&w, &id), 0);
	snap_writer_add(&w, SNAP_SEC_MEMORY, 0, &mem, sizeof(mem));
	assert_int_equal(snap_writer_finish(&w), 0);
	expect_refused(w.buf, w.len, "memory size 4097 is not");
	snap_writer_release(&w);
}

static void padding_not_zero(void **state)
{
	struct snap_writer w = make(1, 0);

	/* The config section is 14 bytes: 2 bytes of padding follow it. */
	w.buf[SNAP_HEADER_LEN + 16 + 15] = 1;
	refix_crc(&w);
	expect_refused(w.buf, w.len, "section 0 has non-zero padding");
	snap_writer_release(&w);
}

static void crc_known_value(void **state)
{
	/* The check value every CRC-32/IEEE implementation agrees on. */
	assert_int_equal(snap_crc32((const uint8_t *)"123456789", 9),
			 0xcbf43926);
}

static const char *virtio_seed; /* argv[1] */
static const char *net_seed; /* argv[2] */

struct want_section {
	const char *name;
	unsigned int queues;
	size_t extra;
};

/*
 * SEED parses, and its device sections named in WANT (N of them, each
 * once) have this build's layout: the device and queue state, the PCI
 * transport's, the device's own. A layout change without a new
 * VIRTIO_STATE_VERSION fails here.
 */
static void check_seed(const char *seed, const struct want_section *want,
		       size_t n)
{
	FILE *in = fopen(seed, "rb");
	static uint8_t buf[1 << 16];
	struct snap_file f;
	size_t len, found = 0;

	if (!in)
		fail_msg("cannot open %s", seed);
	len = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	assert_int_equal(snap_parse(buf, len, PATH, &f), 0);
	for (size_t i = 0; i < f.nr_sections; i++) {
		const struct snap_section *s = &f.sections[i];
		const struct snap_device_header *h = (const void *)s->data;

		if (s->type != SNAP_SEC_DEVICE)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (strcmp(h->name, want[k].name))
				continue;
			assert_int_equal(h->version, VIRTIO_STATE_VERSION);
			assert_int_equal(
				s->len,
				sizeof(*h) +
					sizeof(struct virtio_device_state) +
					want[k].queues *
						sizeof(struct virtq_state) +
					sizeof(struct virtio_pci_state) +
					want[k].extra);
			found++;
		}
	}
	assert_int_equal(found, n);
	snap_file_release(&f);
}

/* The fuzz seed of a VM with virtio-blk, -console and -rng. */
static void virtio_seed_layout(void **state)
{
	static const struct want_section want[] = {
		{ "virtio-blk0", 1, sizeof(struct virtio_blk_state) },
		{ "virtio-console", 2, 0 },
		{ "virtio-rng", 1, 0 },
	};

	check_seed(virtio_seed, want, sizeof(want) / sizeof(want[0]));
}

/*
 * The fuzz seed of a VM with virtio-net (on a tap) and -vsock; the net
 * section records the tap it was on.
 */
static void net_seed_layout(void **state)
{
	static const struct want_section want[] = {
		{ "virtio-net0", 2, sizeof(struct virtio_net_state) },
		{ "virtio-vsock", 3, sizeof(struct virtio_vsock_state) },
	};

	check_seed(net_seed, want, sizeof(want) / sizeof(want[0]));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncated),
		cmocka_unit_test(trailing_bytes),
		cmocka_unit_test(bad_magic_version_arch),
		cmocka_unit_test(corrupt),
		cmocka_unit_test(wrong_section_size),
		cmocka_unit_test(huge_section_length),
		cmocka_unit_test(unknown_type),
		cmocka_unit_test(missing_vcpu_section),
		cmocka_unit_test(duplicate_and_missing),
		cmocka_unit_test(config_not_text),
		cmocka_unit_test(bad_memory_size),
		cmocka_unit_test(padding_not_zero),
		cmocka_unit_test(crc_known_value),
		cmocka_unit_test(virtio_seed_layout),
		cmocka_unit_test(net_seed_layout),
	};

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s SEED NET-SEED (tests/fuzz/seeds/snapshot/x86-1vcpu-virtio.state, x86-1vcpu-net-vsock.state)\n",
			argv[0]);
		return 2;
	}
	virtio_seed = argv[1];
	net_seed = argv[2];

	return cmocka_run_group_tests(tests, NULL, NULL);
}
