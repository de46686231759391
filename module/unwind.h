/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_UNWIND_H
#define OFFS_UNWIND_H

#include <linux/types.h>

struct task_struct;

int offs_unwind_init(void);
void offs_unwind_exit(void);
unsigned int offs_unwind_kernel(struct task_struct *t, unsigned long *ips,
				unsigned int max, bool *truncated, bool cached,
				u64 *id, const unsigned long **frames);
void offs_unwind_commit(void);
unsigned int offs_unwind_interrupted(unsigned long *ips, unsigned int max,
				     bool *truncated, bool *umode);

#endif /* OFFS_UNWIND_H */
