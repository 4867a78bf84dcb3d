/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The only places where scheduling decisions touch the host: thread
 * affinity, thread priority (boosts) and KVM's halt polling (which idle
 * exits a VM keeps is the architecture's: arch_idle_exits_disable()). Each returns 0 or -errno and never logs: the
 * brain counts failures and reports them in --stats.
 */
#ifndef HVM_SCHED_ACTUATORS_H
#define HVM_SCHED_ACTUATORS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Restrict thread TID to host CPU CPU. */
int act_pin_thread(pid_t tid, int cpu);

/* Let thread TID run on any of CPUS[0..NR). */
int act_spread_thread(pid_t tid, const uint16_t *cpus, unsigned int nr);

/* KVM_CAP_HALT_POLL on the VM: poll up to NS before blocking a vCPU. */
int act_set_halt_poll(int vm_fd, uint32_t ns);

/*
 * A boost: raise TID to ACT_BOOST_NICE, but never above CEILING (the
 * process's nice when the VM was created: an operator's `nice 19` holds),
 * saving its current nice value in *SAVED; later restore it. Needs
 * CAP_SYS_NICE to lower a nice value.
 */
#define ACT_BOOST_NICE (-10)
int act_boost_thread(pid_t tid, int ceiling, int *saved);
int act_unboost_thread(pid_t tid, int saved);

#endif
