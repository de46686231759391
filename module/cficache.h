/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_CFICACHE_H
#define OFFS_CFICACHE_H

#include "offsample.h"
#include "ucfi.h"
#include "upy.h"

struct file;
struct offs_ucfi_ent;

/* Counters of cficache.c, under its lock (read without it for stats). */
struct offs_cficache_stats {
	u64 built;
	u64 failed;
	u64 too_big;
	u64 deferred;
	u64 evicted;
	u64 build_ns;		/* wall time */
	u64 build_cpu_ns;	/* CPU time */
	u64 build_cpu_max_ns;	/* ... of the longest build */
	u64 over_work;		/* failed: over the compiler's work bound */
	u64 over_time;		/* failed: over cfi_build_ms */
	u64 cancelled;		/* ended by rmmod */
	u64 throttled;		/* builds that waited for the builds' CPU credit */
	u64 failed_known;	/* not built: failed before (fingerprint) */
};

extern struct offs_cficache_stats offs_cficache_stats;

int offs_cficache_init(void);
void offs_cficache_exit(void);
struct offs_ucfi_ent *offs_cficache_get(struct file *file, bool *retry);
void offs_cficache_put(struct offs_ucfi_ent *e);
bool offs_cficache_same_file(const struct offs_ucfi_ent *e, struct file *file);
const struct offs_cfi_table *
offs_cficache_table(const struct offs_ucfi_ent *e, bool *pending);
const struct offs_py_syms *offs_cficache_py(const struct offs_ucfi_ent *e);
void offs_cficache_totals(unsigned int *ents, size_t *bytes, unsigned int *jobs);
void offs_cficache_shrink(void);
void offs_cficache_retry(void);
unsigned int offs_cficache_epoch(void);

#endif /* OFFS_CFICACHE_H */
