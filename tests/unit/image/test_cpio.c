// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The newc writer (src/image/cpio.c): what it writes parses back as the
 * kernel's unpacker reads it, member by member, up to the trailer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "image/cpio.h"

struct member {
	char name[64];
	unsigned int mode, size, rdev_major, rdev_minor;
	const uint8_t *data;
};

static unsigned int hex8(const uint8_t *p)
{
	char s[9];

	memcpy(s, p, 8);
	s[8] = '\0';
	return (unsigned int)strtoul(s, NULL, 16);
}

/* Parse the member at *OFF, as Linux's init/initramfs.c does. */
static void parse(const uint8_t *buf, size_t len, size_t *off, struct member *m)
{
	const uint8_t *h = buf + *off;
	unsigned int namesize;

	assert_true(*off + 110 <= len);
	assert_memory_equal(h, "070701", 6);
	m->mode = hex8(h + 14);
	m->size = hex8(h + 54);
	m->rdev_major = hex8(h + 78);
	m->rdev_minor = hex8(h + 86);
	namesize = hex8(h + 94);
	assert_true(namesize > 0 && namesize < sizeof(m->name));
	memcpy(m->name, h + 110, namesize);
	assert_int_equal(m->name[namesize - 1], '\0');
	*off += (110 + namesize + 3) & ~3u;
	m->data = buf + *off;
	*off += (m->size + 3) & ~3u;
	assert_true(*off <= len);
}

static void test_members_parse_back(void **state)
{
	struct cpio c;
	struct member m;
	size_t off = 0;

	cpio_init(&c);
	cpio_add_dir(&c, "dev");
	cpio_add(&c, "dev/console", S_IFCHR | 0600, NULL, 0, 5, 1);
	cpio_add_file(&c, "init", 0755, "abcde", 5);
	assert_int_equal(cpio_finish(&c), 0);
	assert_int_equal(c.len % 4, 0);

	parse(c.buf, c.len, &off, &m);
	assert_string_equal(m.name, "dev");
	assert_true(S_ISDIR(m.mode));
	parse(c.buf, c.len, &off, &m);
	assert_string_equal(m.name, "dev/console");
	assert_true(S_ISCHR(m.mode));
	assert_int_equal(m.rdev_major, 5);
	assert_int_equal(m.rdev_minor, 1);
	parse(c.buf, c.len, &off, &m);
	assert_string_equal(m.name, "init");
	assert_int_equal(m.mode, S_IFREG | 0755);
	assert_int_equal(m.size, 5);
	assert_memory_equal(m.data, "abcde", 5);
	parse(c.buf, c.len, &off, &m);
	assert_string_equal(m.name, "TRAILER!!!");
	assert_int_equal(off, c.len);
	cpio_release(&c);
}

static void test_overlong_name_refused(void **state)
{
	static char name[5000];
	struct cpio c;

	memset(name, 'a', sizeof(name) - 1);
	cpio_init(&c);
	cpio_add_file(&c, name, 0644, "x", 1);
	cpio_add_file(&c, "ok", 0644, "x", 1);
	assert_int_equal(cpio_finish(&c), -EINVAL);
	cpio_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members_parse_back),
		cmocka_unit_test(test_overlong_name_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
