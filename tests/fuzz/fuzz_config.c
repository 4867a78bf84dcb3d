// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the configuration parsers on their own (the
 * loaders harness also feeds its inputs to the file parser, sharing its
 * time with four loaders): the input is a --config file (in a memfd at a
 * fixed fd, so that it may name itself up to the nesting limit), and it is
 * also split at its first NUL into a key and a value for hvm_config_set,
 * the embedding API's entry. Every refusal is a negative errno with a
 * message; a config that parsed survives config_dup and both are freed.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/config.h"
#include "fuzz.h"

#define CONFIG_FD 900
#define CONFIG_PATH "/proc/self/fd/900"

/* The config parser asks the arch for its vCPU limit (x86.c needs KVM). */
unsigned int arch_max_vcpus(void)
{
	return X86_MAX_VCPUS;
}

static void check_result(int r)
{
	check(r <= 0);
	if (r < 0)
		check(hvm_error_message()[0] != '\0');
}

static void fuzz_file(const uint8_t *data, size_t size)
{
	struct hvm_config cfg, *copy;

	if (ftruncate(CONFIG_FD, 0) ||
	    pwrite(CONFIG_FD, data, size, 0) != (ssize_t)size)
		abort();
	check(config_init_defaults(&cfg) == 0);
	hvm_clear_error();
	check_result(hvm_config_load_file(&cfg, CONFIG_PATH));
	copy = config_dup(&cfg);
	check(copy != NULL);
	hvm_config_free(copy);
	config_free_fields(&cfg);
}

static void fuzz_set(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	char *key, *value = NULL;
	struct hvm_config *cfg;

	if (!nul)
		return;
	key = strndup((const char *)data, (size_t)(nul - data));
	if (nul + 1 < data + size)
		value = strndup((const char *)nul + 1,
				(size_t)(data + size - nul - 1));
	cfg = hvm_config_new();
	check(cfg != NULL);
	hvm_clear_error();
	check_result(hvm_config_set(cfg, key, value));
	hvm_config_free(cfg);
	free(key);
	free(value);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = memfd_create("fuzz-config", MFD_CLOEXEC);

	log_set_level(LOG_ERROR);
	if (fd < 0 || dup2(fd, CONFIG_FD) != CONFIG_FD)
		return -1;
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_config_paths_are_tame(data, size, CONFIG_PATH))
		return 0;
	fuzz_file(data, size);
	fuzz_set(data, size);
	return 0;
}
