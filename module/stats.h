/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - the counters behind /proc/offsample/stats.
 *
 * A field's name is the name users read: stats.c prints each counter by
 * stringifying the field (OFFS_SHOW_U64(ticks) prints "ticks"), so the two
 * cannot drift apart, and tests/host/stats.bats checks that every field
 * here is printed or listed as internal in stats.c.
 *
 * u64 counters have a single writer, the sampler kthread (OFFS_STAT_ADD),
 * and are read locklessly; the atomic ones are updated by several
 * contexts.  They are kept apart so that readers bumping the latter do not
 * share the sampler's cache lines.  A new field is a new line in the file:
 * docs/FORMAT.md lists them.
 */
#ifndef OFFS_STATS_H
#define OFFS_STATS_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/compiler.h>

#include "offsample.h"

struct offs_stats {
	/* Written by the sampler kthread only. */
	u64 ticks;
	u64 ticks_overrun;
	u64 threads_visited;
	u64 kthreads_skipped;
	u64 oncpu;
	u64 exiting;
	u64 rq_raced;
	u64 blocked_raced;		/* re-check fired for a "blocked" task */
	u64 offcpu;			/* samples + dropped */
	u64 samples;
	u64 samples_reason[OFFS_R_NR];
	u64 session_samples;		/* counted in sessions' windows */
	u64 session_dropped;		/* ... that could not be stored */
	u64 stacks_unwound;
	u64 stacks_truncated;
	u64 stacks_empty;
	u64 dropped;
	u64 dropped_table_full;
	u64 dropped_nomem;
	u64 tick_ns_last;
	u64 tick_ns_max;
	u64 tick_ns_total;
	u64 snapshot_grow;
	u64 cache_hits;			/* unchanged threads counted again */
	u64 cache_misses;		/* full captures */
	u64 cache_full;
	u64 cache_entries;
	u64 hits_timed;			/* cache hits that were timed */
	u64 hit_ns_timed;		/* time in those (see sampler.c) */
	u64 full_timed;			/* full captures that were timed */
	u64 cgroup_skipped;		/* threads outside the cgroup parameter */
	u64 user_walks;
	u64 user_frames;
	u64 py_processes;		/* windows holding an interpreter */
	u64 py_frames;			/* Python frames put in stacks */
	u64 py_errors;			/* interpreter or frames unreadable */
	u64 py_names_cut;		/* names longer than upy.h allows */
	u64 py_names_dropped;		/* names not stored (bound, memory) */
	u64 py_threads_over;		/* threads past OFFS_PYWIN_THREADS */
	u64 py_lost;			/* captures maybe short of Python frames */
	u64 py_gil_waits;		/* captures of threads waiting for the GIL */
	u64 py_code_memo_hits;		/* frames named from pystack.c's memo */
	u64 user_faulted;		/* walks ended at a non-resident page */
	u64 user_cfi_frames;		/* user frames found with CFI tables */
	u64 user_rule_memo_hits;	/* their rules found in umm.c's memo */
	u64 user_maps_copied;		/* executable mappings copied (umm.c) */
	u64 user_maps_kept;		/* a copy of an earlier tick used */
	u64 user_maps_keep_full;	/* a copy not kept: OFFS_UKEEP_SLOTS */
	u64 user_maps_rechecked;	/* kept copies found the same again */
	u64 user_maps_checked;		/* walks after the copy's sign moved */
	u64 user_maps_raced;		/* those against a changed copy */
	u64 user_stack_memo_hits;	/* stacks found in ustack.c's memo */
	u64 unwind_errors;		/* user walks ended by CFI not followed */
	u64 user_trylock_failed;
	u64 user_dropped;		/* user stacks not stored (bound) */
	u64 user_ns_total;
	u64 wobj_dropped;
	u64 wobj_fd_closed;		/* the descriptor was no longer open */
	u64 cache_degraded;		/* captures not cached: degraded */
	u64 full_ns_total;		/* time in full-capture visits */
	/* Parts of it (sampler.c): entering the mm, pinning, two of that. */
	u64 full_enter_ns;
	u64 full_pin_ns;
	u64 full_kstack_ns;
	u64 full_uwalk_ns;
	u64 kstack_cache_hits;		/* kernel stacks served remembered */
	u64 kstack_cache_misses;	/* ... unwound (and remembered) */
	u64 kstack_cache_bytes;		/* its fixed size (unwind.c) */
	u64 blocker_looked;		/* lock waits whose holder was looked up */
	u64 blocker_found;		/* ... and found (edges counted) */
	u64 blocker_unknown;		/* ... words did not validate */
	u64 blocker_read_failed;	/* ... words could not be read */
	u64 blocker_raced;		/* ... waiter ran meanwhile */
	u64 blocker_dropped;		/* edges not stored (bounds) */
	u64 blocker_self;		/* run-queue waits behind the sampler */
	u64 blocker_fds;		/* descriptors scanned for pipe/socket ends */
	u64 blocker_fds_cut;		/* ticks that scan stopped at its bound */
	u64 blocker_files_kept;		/* ... waits a memo settled instead */
	u64 blocker_ns_total;		/* time spent on it */
	u64 oncpu_sampled;		/* running threads captured on their CPU */
	u64 oncpu_missed;		/* ... gone from the CPU when it looked */
	u64 oncpu_ns_total;		/* time in those captures (IPI included) */
	u64 critical_ticks;		/* (process, tick) pairs found critical */
	u64 cache_hits_walk;		/* cache hits decided in the walk */
	u64 walk_breaks;		/* walks paused for the scheduler */
	u64 walk_cut;			/* ... that could not go on after it */
	u64 tick_walk_ns_total;		/* tick phases: the RCU walk, */
	u64 tick_visit_ns_total;	/* ... visiting changed threads, */
	u64 tick_end_ns_total;		/* ... and the end of the tick */
	/* Updated by several contexts (proc readers, allocations). */
	atomic64_t sym_lookups;
	atomic64_t sym_hits;
	atomic64_t sym_flushes;
	atomic64_t class_lookups;
	atomic64_t class_hits;
	atomic64_t drains;
	atomic64_t resets;
	atomic64_t swaps_refused;	/* drains/resets over max_retired */
	atomic64_t group_opens_refused;	/* group= stacks opens over it */
	atomic64_t sessions_opened;
	atomic64_t sessions_refused;	/* opens over max_sessions */
	atomic64_t open_denied;		/* opens refused for lack of access */
	atomic64_t threads_throttled;	/* threads readers made to wait */
	atomic64_t memory_bytes;
};

extern struct offs_stats offs_stats;

/* Single-writer counter update: readers see a whole, recent value. */
static inline void offs_stat_add(u64 *counter, u64 n)
{
	WRITE_ONCE(*counter, *counter + n);
}

#define OFFS_STAT_ADD(field, n)	offs_stat_add(&offs_stats.field, (n))

struct seq_file;
/* /proc/offsample/stats: "name value" lines (procfs.c opens the file). */
int offs_stats_show(struct seq_file *m, void *v);

#endif /* OFFS_STATS_H */
