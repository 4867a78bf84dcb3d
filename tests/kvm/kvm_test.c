// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_test.h"

void kvm_test_require_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("SKIP: /dev/kvm is not usable here (%s); the kvm suite needs KVM\n",
		       strerror(errno));
		exit(KVM_TEST_SKIP);
	}
	close(fd);
}

struct hvm_config *kvm_test_config_new(void)
{
	struct hvm_config *cfg = hvm_config_new();
	const char *irqchip = getenv("KVM_TEST_IRQCHIP");

	if (cfg && irqchip && *irqchip &&
	    hvm_config_set(cfg, "irqchip", irqchip) < 0) {
		fprintf(stderr, "KVM_TEST_IRQCHIP=%s: %s\n", irqchip,
			hvm_last_error());
		hvm_config_free(cfg);
		return NULL;
	}
	return cfg;
}

static char *read_all(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)size + 1);

	if (buf && size > 0 && pread(fd, buf, (size_t)size, 0) != size)
		buf[0] = '\0';
	return buf;
}

int guest_boot(struct guest_run *run, const char *kernel, unsigned int cpus,
	       const char *cmdline, const char *const *extra)
{
	struct hvm_config *cfg = kvm_test_config_new();
	int out = memfd_create("guest-console", MFD_CLOEXEC);
	struct hvm_vm *vm;
	char ncpus[16];
	int r = -1;

	memset(run, 0, sizeof(*run));
	if (!cfg || out < 0)
		goto out;
	snprintf(ncpus, sizeof(ncpus), "%u", cpus);
	if (hvm_config_set(cfg, "cpus", ncpus) < 0 ||
	    hvm_config_set(cfg, "mem", "64M") < 0 ||
	    hvm_config_set(cfg, "cmdline", cmdline) < 0 ||
	    (kernel && hvm_config_set(cfg, "kernel", kernel) < 0) ||
	    hvm_config_set_console_fds(cfg, -1, out) < 0)
		goto out;
	for (; extra && *extra; extra++) {
		char key[64];
		const char *eq = strchr(*extra, '=');
		size_t len = eq ? (size_t)(eq - *extra) : strlen(*extra);

		snprintf(key, sizeof(key), "%.*s", (int)len, *extra);
		if (hvm_config_set(cfg, key, eq ? eq + 1 : NULL) < 0)
			goto out;
	}
	vm = hvm_vm_create(cfg);
	if (!vm)
		goto out;
	if (hvm_vm_start(vm) == 0 && hvm_vm_wait(vm, &run->exit) == 0)
		r = 0;
	hvm_vm_destroy(vm);
	run->output = read_all(out);
out:
	if (out >= 0)
		close(out);
	hvm_config_free(cfg);
	return r;
}

void guest_run_free(struct guest_run *run)
{
	free(run->output);
	run->output = NULL;
}

const char *result_field(const struct guest_run *run, const char *key)
{
	static char value[128];
	const char *line, *p;
	size_t klen = strlen(key);

	if (!run->output)
		return NULL;
	line = strstr(run->output, "RESULT ");
	if (!line)
		return NULL;
	for (p = line; *p && *p != '\n'; p++) {
		if ((p == line || p[-1] == ' ') && !strncmp(p, key, klen) &&
		    p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, " \r\n");

			snprintf(value, sizeof(value), "%.*s", (int)n,
				 p + klen + 1);
			return value;
		}
	}
	return NULL;
}
