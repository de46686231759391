// SPDX-License-Identifier: GPL-2.0
/* offsample probe: rwbase - rw_semaphore built on an rt_mutex (PREEMPT_RT 5.15+) */
#include <linux/rwsem.h>

void *offs_probe(struct rw_semaphore *sem);
void *offs_probe(struct rw_semaphore *sem)
{
	return &sem->rwbase.rtmutex;
}
