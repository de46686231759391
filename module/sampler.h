/* SPDX-License-Identifier: GPL-2.0 */
/* sampler.c: the sampling kthread and its tick. */
#ifndef OFFS_SAMPLER_H
#define OFFS_SAMPLER_H

#include <linux/types.h>

int offs_sampler_start(void);
void offs_sampler_stop(void);
void offs_sampler_kick(void);
void offs_sampler_wake(void);
int offs_sampler_quiesce(void);
u64 offs_sampler_cpu_ns(void);

#endif /* OFFS_SAMPLER_H */
