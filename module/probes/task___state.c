// SPDX-License-Identifier: GPL-2.0
/* offsample probe: __state - task_struct.__state (5.14), before: .state */
#include <linux/sched.h>

unsigned int offs_probe(struct task_struct *t);
unsigned int offs_probe(struct task_struct *t)
{
	return READ_ONCE(t->__state);
}
