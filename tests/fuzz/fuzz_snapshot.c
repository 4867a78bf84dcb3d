// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the snapshot state file's parser
 * (src/snapshot/format.c). A CRC-32 guards the body, so a fuzzer's
 * mutations would almost all stop at the checksum: the harness parses the
 * input as it is, then again with the header's length and CRC made right,
 * which lets mutations reach the section walk and its rules.
 *
 * Invariants beyond "no sanitizer report":
 *  - a refused file leaves an error message that names the file;
 *  - an accepted file's sections lie inside the input, in order, and
 *    each per-vCPU one names a vCPU below nr_vcpus.
 */
#include <endian.h>

#include "base/log.h"
#include "fuzz.h"
#include "snapshot/format.h"

static void parse(const uint8_t *buf, size_t len)
{
	struct snap_file f;
	const uint8_t *prev = buf;

	if (snap_parse(buf, len, "fuzz", &f) < 0) {
		check(!strncmp(hvm_error_message(), "snapshot fuzz: ", 15));
		check(!f.sections);
		return;
	}
	check(f.nr_vcpus <= SNAP_MAX_VCPUS);
	for (size_t i = 0; i < f.nr_sections; i++) {
		const struct snap_section *s = &f.sections[i];

		check(s->data >= prev && s->data + s->len <= buf + len);
		check(snap_section_name(s->type));
		prev = s->data + s->len;
		if (s->type >= SNAP_SEC_VCPU_REGS && s->type < SNAP_SEC_DEVICE)
			check(s->instance < f.nr_vcpus);
	}
	snap_file_release(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint64_t len = htole64(size);
	uint32_t crc;

	parse(data, size);
	if (size < SNAP_HEADER_LEN)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memcpy(copy + 24, &len, sizeof(len));
	crc = htole32(
		snap_crc32(copy + SNAP_HEADER_LEN, size - SNAP_HEADER_LEN));
	memcpy(copy + 32, &crc, sizeof(crc));
	parse(copy, size);
	free(copy);
	return 0;
}
