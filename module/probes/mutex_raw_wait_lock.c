// SPDX-License-Identifier: GPL-2.0
/* offsample probe: a mutex's wait_lock is a raw_spinlock_t (5.11+, not RT) */
#include <linux/mutex.h>
#include <linux/spinlock.h>

raw_spinlock_t *offs_probe(struct mutex *m);
raw_spinlock_t *offs_probe(struct mutex *m)
{
	return &m->wait_lock;
}
