/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every libFuzzer harness here shares: its entry points and check(). */
#ifndef HVM_FUZZ_H
#define HVM_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant the code under test must keep; abort() makes it a crash. */
#define check(cond)                                                       \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "invariant broken: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);               \
			abort();                                          \
		}                                                         \
	} while (0)

/*
 * A config file may name another config file: keep a harness away from
 * anything that could block or wander (a terminal, a FIFO under /dev,
 * /proc files other than its own, SELF) but let it name SELF.
 */
static inline bool fuzz_config_paths_are_tame(const uint8_t *data, size_t size,
					      const char *self)
{
	static const char *const wild[] = { "/dev", "/sys", "/proc", "fd/" };
	size_t self_len = strlen(self);

	for (size_t i = 0; i < size; i++) {
		if (size - i >= self_len && !memcmp(data + i, self, self_len)) {
			i += self_len - 1;
			continue;
		}
		for (size_t w = 0; w < sizeof(wild) / sizeof(wild[0]); w++) {
			size_t n = strlen(wild[w]);

			if (size - i >= n && !memcmp(data + i, wild[w], n))
				return false;
		}
	}
	return true;
}

#endif
