// SPDX-License-Identifier: GPL-2.0
/* offsample probe: rt_mutex_base - the rt_mutex core with its owner (5.15; struct rt_mutex before) */
#include <linux/rtmutex.h>

struct task_struct *offs_probe(struct rt_mutex_base *l);
struct task_struct *offs_probe(struct rt_mutex_base *l)
{
	return READ_ONCE(l->owner);
}
