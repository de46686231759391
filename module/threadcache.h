/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_THREADCACHE_H
#define OFFS_THREADCACHE_H

#include "offsample.h"
#include "table.h"

struct offs_tc_ent;

int offs_tc_init(void);
size_t offs_tc_entry_size(void);
void offs_tc_exit(void);
void offs_tc_tick_begin(unsigned int config_seq);
void offs_tc_sweep(bool all);
struct offs_tc_ent *offs_tc_lookup(struct task_struct *t);
struct offs_rec *offs_tc_walk_hit(struct task_struct *t, bool *first);
void offs_tc_touch(struct task_struct *t);
bool offs_tc_unchanged(struct task_struct *t, const struct offs_tc_ent *e);
struct offs_hit *offs_tc_hit(struct offs_tc_ent *e);
void offs_tc_store(struct offs_tc_ent *e, const struct offs_sample *s,
		   unsigned int config_seq);
void offs_tc_invalidate(struct offs_tc_ent *e);
unsigned long offs_tc_ncsw(const struct offs_tc_ent *e);

#endif /* OFFS_THREADCACHE_H */
