/* SPDX-License-Identifier: GPL-2.0 */
/* oncpu.c: stacks of threads running on a CPU, captured there. */
#ifndef OFFS_ONCPU_H
#define OFFS_ONCPU_H

#include "offsample.h"

enum offs_pin offs_oncpu_capture(struct task_struct *t, struct offs_sample *s,
				 unsigned int max_depth);

#endif /* OFFS_ONCPU_H */
