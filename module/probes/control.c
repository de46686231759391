// SPDX-License-Identifier: GPL-2.0
/* offsample probe: control - must compile against any supported kernel. */
#include <linux/module.h>
#include <linux/sched.h>

int offs_probe(void);
int offs_probe(void)
{
	return TASK_COMM_LEN;
}
