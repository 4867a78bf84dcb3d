/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every libFuzzer harness here shares: its entry points and check(). */
#ifndef HVM_FUZZ_H
#define HVM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
