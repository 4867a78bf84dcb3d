// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <linux/kvm.h>

#include "sched/actuators.h"

int act_pin_thread(pid_t tid, int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set) < 0 ? -errno : 0;
}

int act_spread_thread(pid_t tid, const uint16_t *cpus, unsigned int nr)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (unsigned int i = 0; i < nr; i++)
		if (cpus[i] < CPU_SETSIZE)
			CPU_SET(cpus[i], &set);
	if (CPU_COUNT(&set) == 0)
		return -EINVAL;
	return sched_setaffinity(tid, sizeof(set), &set) < 0 ? -errno : 0;
}

int act_set_halt_poll(int vm_fd, uint32_t ns)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_HALT_POLL,
				      .args = { ns } };

	return ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

int act_boost_thread(pid_t tid, int ceiling, int *saved)
{
	int target = ceiling > ACT_BOOST_NICE ? ceiling : ACT_BOOST_NICE;
	int prio;

	errno = 0;
	prio = getpriority(PRIO_PROCESS, (id_t)tid);
	if (prio == -1 && errno)
		return -errno;
	*saved = prio;
	if (prio <= target)
		return 0; /* already at least that high */
	return setpriority(PRIO_PROCESS, (id_t)tid, target) < 0 ? -errno : 0;
}

int act_unboost_thread(pid_t tid, int saved)
{
	return setpriority(PRIO_PROCESS, (id_t)tid, saved) < 0 ? -errno : 0;
}
