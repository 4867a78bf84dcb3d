// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/file.h"
#include "base/log.h"
#include "core/vm.h"
#include "image/boot_files.h"
#include "image/builtin_kernel.h"

#define PAGE_SIZE_4K 4096ULL

int kernel_file_open(const struct vm *vm, size_t max, struct kernel_file *k)
{
	const char *path = vm->cfg->kernel;
	const uint8_t *data;
	size_t size;
	int r;

	*k = (struct kernel_file){ 0 };
	if (!path) {
		if (!hvm_builtin_kernel_size())
			return hvm_set_error(
				-ENOENT,
				"this build has no built-in test kernel; pass --kernel");
		k->data = hvm_builtin_kernel_start;
		k->size = hvm_builtin_kernel_size();
		k->name = "(built-in test kernel)";
		return 0;
	}
	/* Mapped, not read: loaders copy only the loadable parts. */
	r = map_whole_file(path, "kernel", max, &data, &size);
	if (r < 0)
		return r;
	*k = (struct kernel_file){
		.data = data,
		.size = size,
		.name = path,
		.mapped = size,
	};
	return 0;
}

void kernel_file_release(struct kernel_file *k)
{
	free(k->owned);
	if (k->mapped)
		munmap((void *)k->data, k->mapped);
	*k = (struct kernel_file){ 0 };
}

int initrd_read(const struct vm *vm, uint8_t **data, size_t *size)
{
	uint8_t *agent, *user, *both;
	size_t agent_size, user_size;
	int r;

	*data = NULL;
	*size = 0;
	if (!vm->cfg->agent_initrd) {
		if (!vm->cfg->initrd)
			return 0;
		return read_whole_file(vm->cfg->initrd, "initrd",
				       INITRD_MAX_SIZE, data, size);
	}
	/*
	 * --agent: the agent's archive, then --initrd's. The kernel unpacks
	 * concatenated newc archives in turn (each ends 4-byte aligned).
	 */
	r = read_whole_file(vm->cfg->agent_initrd, "agent initramfs",
			    INITRD_MAX_SIZE, &agent, &agent_size);
	if (r < 0 || !vm->cfg->initrd) {
		*data = r < 0 ? NULL : agent;
		*size = r < 0 ? 0 : agent_size;
		return r;
	}
	r = read_whole_file(vm->cfg->initrd, "initrd",
			    INITRD_MAX_SIZE - agent_size, &user, &user_size);
	if (r < 0) {
		free(agent);
		return r;
	}
	both = realloc(agent, agent_size + user_size);
	if (!both) {
		free(agent);
		free(user);
		return hvm_set_error(-ENOMEM, "out of memory for the initrd");
	}
	memcpy(both + agent_size, user, user_size);
	free(user);
	*data = both;
	*size = agent_size + user_size;
	return 0;
}

int initrd_load_high(struct vm *vm, uint64_t floor, uint64_t ceiling,
		     uint64_t *gpa, uint64_t *size)
{
	uint8_t *data;
	size_t len;
	uint64_t at;
	int r;

	*gpa = *size = 0;
	r = initrd_read(vm, &data, &len);
	if (r < 0 || !data)
		return r;
	at = (ceiling - len) & ~(PAGE_SIZE_4K - 1);
	if (ceiling < floor || len > ceiling - floor || at < floor) {
		free(data);
		return hvm_set_error(
			-E2BIG,
			"initrd %s (%zu bytes) does not fit in guest RAM between the kernel's end (0x%llx) and 0x%llx; give the VM more --mem",
			vm->cfg->initrd, len, (unsigned long long)floor,
			(unsigned long long)ceiling);
	}
	r = guest_write(&vm->mem, at, data, len);
	free(data);
	if (r < 0)
		return hvm_set_error(
			r, "initrd %s: 0x%llx+%zu is not guest RAM",
			vm->cfg->initrd, (unsigned long long)at, len);
	*gpa = at;
	*size = len;
	return 0;
}
