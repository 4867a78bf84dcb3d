/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The threads a VM starts. Each begins with three per-thread settings of
 * the thread that started it: the log level (base/log.h, so that each VM
 * logs at its own --verbose), the sandbox request (sandbox.h, so that it
 * confines itself when it calls sandbox_thread_enter()) and the identity
 * it takes there (identity.h, --user).
 */
#ifndef HVM_SANDBOX_THREAD_H
#define HVM_SANDBOX_THREAD_H

#include <pthread.h>

/* pthread_create(THREAD, NULL, FN, ARG); 0 or a positive errno, as it. */
int vm_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
