// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The sandbox as the harnesses need it: never requested, so threads that
 * sandbox/thread.c starts (none while fuzzing: loops are never started)
 * enter no filter. Keeps libseccomp out of the fuzz builds.
 */
#include <stddef.h>

#include "sandbox/identity.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

void sandbox_set_requested(bool on)
{
}

bool sandbox_requested(void)
{
	return false;
}

void sandbox_thread_enter(enum sandbox_kind kind)
{
}

int sandbox_grant_beneath(int fd, enum sandbox_grant what)
{
	return 0;
}

/* No --user while fuzzing: threads stay who they are. */
void identity_set_requested(const struct vm_identity *id)
{
}

const struct vm_identity *identity_requested(void)
{
	return NULL;
}
