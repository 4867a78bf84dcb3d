/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device code under its real seccomp filter, in unit tests: with
 * HINTVM_TEST_SANDBOX=1 in the environment (meson runs such tests a second
 * time that way, on native builds), sandboxed_call() runs FN(ARG) on a new
 * thread that confined itself as KIND first, so a system call missing from
 * KIND's table in src/sandbox/sandbox_rules.c kills the test by SIGSYS with
 * the line naming it. Without it, FN runs on the calling thread.
 */
#ifndef HVM_TESTS_UNIT_SANDBOXED_CALL_H
#define HVM_TESTS_UNIT_SANDBOXED_CALL_H

#include "sandbox/sandbox.h"

void sandboxed_call(enum sandbox_kind kind, void (*fn)(void *), void *arg);
/*
 * The same, with PREPARE(ARG) run on the new thread just before it
 * confines itself, as the real thread does its grants (a 9P worker's
 * share: p9_fs_grant()).
 */
void sandboxed_call_prepared(enum sandbox_kind kind, void (*prepare)(void *),
			     void (*fn)(void *), void *arg);

/*
 * With HINTVM_TEST_SANDBOX=1: the threads code under test starts between
 * these two calls confine themselves as they do in hintvm (each as its
 * own kind, at its start). Without it, nothing.
 */
void sandboxed_threads_begin(void);
void sandboxed_threads_end(void);

#endif
