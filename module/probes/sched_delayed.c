// SPDX-License-Identifier: GPL-2.0
/* offsample probe: sched_delayed - EEVDF delayed dequeue (6.12) */
#include <linux/sched.h>

int offs_probe(struct task_struct *t);
int offs_probe(struct task_struct *t)
{
	return READ_ONCE(t->se.sched_delayed);
}
