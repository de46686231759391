// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - /proc/offsample/stats: one "name value" line per counter of
 * struct offs_stats (stats.h), per parameter worth seeing beside them, and
 * per figure derived from them.  procfs.c opens the file (access checks)
 * and calls offs_stats_show().
 *
 * A counter's line is made from its field (OFFS_SHOW_U64(ticks) prints
 * "ticks"), so the name users read is the field's.  Every field is printed
 * here, except those only used to derive a figure:
 *   internal: tick_ns_total hits_timed hit_ns_timed
 * (tests/host/stats.bats checks that list against the struct).
 *
 * Lockless: sampler counters are read with READ_ONCE() while the sampler
 * may be adding to them, so two lines of one read can be a tick apart.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/seq_file.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "session.h"
#include "blocker.h"
#include "threadcache.h"
#include "cficache.h"
#include "ustack.h"
#include "sampler.h"
#include "symcache.h"
#include "pystack.h"

struct offs_stats offs_stats;

#define OFFS_SHOW(name, val) \
	seq_printf(m, "%-24s %llu\n", name, (unsigned long long)(val))
#define OFFS_SHOW_U64(f)	OFFS_SHOW(#f, READ_ONCE(offs_stats.f))
#define OFFS_SHOW_ATOMIC(f)	OFFS_SHOW(#f, atomic64_read(&offs_stats.f))
#define OFFS_SHOW_VALUE(name, val)	OFFS_SHOW(#name, val)
/* The CFI cache's counters (cficache.h): cfi_FIELD, from its own struct. */
#define OFFS_SHOW_CFI(f) \
	OFFS_SHOW("cfi_" #f, READ_ONCE(offs_cficache_stats.f))
/* FIELD_reason[]: one line per wait reason, FIELD_<reason>. */
#define OFFS_SHOW_REASONS(field) \
	offs_show_reasons(m, #field, offs_stats.field##_reason)

static void offs_show_reasons(struct seq_file *m, const char *prefix,
			      const u64 *per_reason)
{
	char name[32];
	int r;

	for (r = 0; r < OFFS_R_NR; r++) {
		snprintf(name, sizeof(name), "%s_%s", prefix,
			 offs_reason_names[r]);
		OFFS_SHOW(name, READ_ONCE(per_reason[r]));
	}
}

int offs_stats_show(struct seq_file *m, void *v)
{
	struct offs_stats *st = &offs_stats;
	struct offs_gen_summary sum;
	u64 ticks, visited, walked, avg, cpu_ppm, misses, timed;
	unsigned int max_stacks, cfi_ents, cfi_jobs;
	size_t cfi_bytes;

	offs_cur_summary(&sum);
	offs_cficache_totals(&cfi_ents, &cfi_bytes, &cfi_jobs);
	ticks = READ_ONCE(st->ticks);
	visited = READ_ONCE(st->threads_visited);
	walked = visited + READ_ONCE(st->kthreads_skipped) +
		 READ_ONCE(st->cgroup_skipped);
	misses = READ_ONCE(st->cache_misses);
	timed = READ_ONCE(st->hits_timed);
	avg = ticks ? READ_ONCE(st->tick_ns_total) / ticks : 0;
	/* Share of one CPU: average walk time times hz, in parts per million. */
	cpu_ppm = avg * READ_ONCE(offs_hz) / 1000;
	max_stacks = READ_ONCE(offs_max_stacks);

	seq_printf(m, "%-24s %s\n", "version", OFFS_VERSION);
	OFFS_SHOW_VALUE(format, OFFS_FORMAT_VERSION);
	OFFS_SHOW_VALUE(enabled, READ_ONCE(offs_enabled));
	OFFS_SHOW_VALUE(hz, READ_ONCE(offs_hz));
	OFFS_SHOW_U64(ticks);
	OFFS_SHOW_U64(ticks_overrun);
	OFFS_SHOW_U64(threads_visited);
	OFFS_SHOW_U64(kthreads_skipped);
	OFFS_SHOW_U64(oncpu);
	OFFS_SHOW_U64(exiting);
	OFFS_SHOW_U64(rq_raced);
	OFFS_SHOW_U64(blocked_raced);
	OFFS_SHOW_U64(offcpu);
	OFFS_SHOW_U64(samples);
	OFFS_SHOW_REASONS(samples);
	OFFS_SHOW_U64(dropped);
	OFFS_SHOW_U64(dropped_table_full);
	OFFS_SHOW_U64(dropped_nomem);
	OFFS_SHOW_U64(stacks_unwound);
	OFFS_SHOW_U64(stacks_truncated);
	OFFS_SHOW_U64(stacks_empty);
	OFFS_SHOW_VALUE(stacks_unique, offs_table_nstacks());
	OFFS_SHOW_VALUE(records, sum.nrecs);
	OFFS_SHOW_VALUE(max_stacks, max_stacks);
	OFFS_SHOW_VALUE(max_stacks_limit, offs_max_stacks_limit());
	OFFS_SHOW_VALUE(table_fill_pct,
			max_stacks ?
			100ULL * max(offs_table_nstacks(), sum.nrecs) / max_stacks : 0);
	OFFS_SHOW_VALUE(generation, sum.seq);
	OFFS_SHOW_VALUE(generation_ticks, sum.ticks);
	OFFS_SHOW_VALUE(generation_samples, sum.samples);
	OFFS_SHOW_ATOMIC(drains);
	OFFS_SHOW_ATOMIC(resets);
	OFFS_SHOW_VALUE(generations_retired, offs_table_retired());
	OFFS_SHOW_VALUE(generations_retired_group, offs_table_retired_group());
	OFFS_SHOW_VALUE(max_retired, READ_ONCE(offs_max_retired));
	OFFS_SHOW_ATOMIC(swaps_refused);
	OFFS_SHOW_ATOMIC(group_opens_refused);
	OFFS_SHOW_VALUE(sessions, offs_sess_count_open());
	OFFS_SHOW_VALUE(max_sessions, READ_ONCE(offs_max_sessions));
	OFFS_SHOW_ATOMIC(sessions_opened);
	OFFS_SHOW_ATOMIC(sessions_refused);
	OFFS_SHOW_U64(session_samples);
	OFFS_SHOW_U64(session_dropped);
	OFFS_SHOW_U64(tick_ns_last);
	OFFS_SHOW_VALUE(tick_ns_avg, avg);
	OFFS_SHOW_U64(tick_ns_max);
	OFFS_SHOW_VALUE(thread_ns_avg,
			visited ? READ_ONCE(st->tick_ns_total) / visited : 0);
	OFFS_SHOW_VALUE(thread_ns_hit,
			timed ? READ_ONCE(st->hit_ns_timed) / timed : 0);
	OFFS_SHOW_VALUE(thread_ns_full,
			misses ? READ_ONCE(st->full_ns_total) / misses : 0);
	OFFS_SHOW_VALUE(thread_ns_walk,
			walked ?
			READ_ONCE(st->tick_walk_ns_total) / walked : 0);
	OFFS_SHOW_U64(full_ns_total);
	OFFS_SHOW_U64(full_enter_ns);
	OFFS_SHOW_U64(full_pin_ns);
	OFFS_SHOW_U64(full_kstack_ns);
	OFFS_SHOW_U64(full_uwalk_ns);
	OFFS_SHOW_U64(full_timed);
	OFFS_SHOW_U64(kstack_cache_hits);
	OFFS_SHOW_U64(kstack_cache_misses);
	OFFS_SHOW_U64(kstack_cache_bytes);
	OFFS_SHOW_U64(tick_walk_ns_total);
	OFFS_SHOW_U64(tick_visit_ns_total);
	OFFS_SHOW_U64(tick_end_ns_total);
	OFFS_SHOW_U64(cache_hits);
	OFFS_SHOW_U64(cache_hits_walk);
	OFFS_SHOW_U64(walk_breaks);
	OFFS_SHOW_U64(walk_cut);
	OFFS_SHOW_U64(cache_misses);
	OFFS_SHOW_U64(cache_entries);
	OFFS_SHOW_U64(cache_full);
	OFFS_SHOW_U64(cache_degraded);
	OFFS_SHOW_VALUE(thread_cache, READ_ONCE(offs_thread_cache));
	OFFS_SHOW_VALUE(thread_cache_limit, offs_thread_cache_limit());
	OFFS_SHOW_U64(cgroup_skipped);
	OFFS_SHOW_U64(user_walks);
	OFFS_SHOW_U64(user_frames);
	OFFS_SHOW_U64(py_processes);
	OFFS_SHOW_U64(py_frames);
	OFFS_SHOW_U64(py_errors);
	OFFS_SHOW_U64(py_names_cut);
	OFFS_SHOW_U64(py_names_dropped);
	OFFS_SHOW_U64(py_threads_over);
	OFFS_SHOW_U64(py_lost);
	OFFS_SHOW_U64(py_gil_waits);
	OFFS_SHOW_U64(py_code_memo_hits);
	OFFS_SHOW_U64(user_faulted);
	OFFS_SHOW_U64(user_cfi_frames);
	OFFS_SHOW_U64(user_rule_memo_hits);
	OFFS_SHOW_U64(user_maps_copied);
	OFFS_SHOW_U64(user_maps_kept);
	OFFS_SHOW_U64(user_maps_keep_full);
	OFFS_SHOW_U64(user_maps_rechecked);
	OFFS_SHOW_U64(user_maps_checked);
	OFFS_SHOW_U64(user_maps_raced);
	OFFS_SHOW_U64(user_stack_memo_hits);
	OFFS_SHOW_U64(unwind_errors);
	OFFS_SHOW_U64(user_trylock_failed);
	OFFS_SHOW_U64(user_dropped);
	OFFS_SHOW_U64(user_ns_total);
	OFFS_SHOW_VALUE(user_stacks_unique, offs_ustack_count());
	OFFS_SHOW_VALUE(user_paths_unique, offs_upath_count());
	OFFS_SHOW_VALUE(py_names_unique, offs_pyname_count());
	OFFS_SHOW_VALUE(py_names_bytes, offs_pyname_bytes());
	OFFS_SHOW_VALUE(cfi_cache_mb, READ_ONCE(offs_cfi_cache_mb));
	OFFS_SHOW_VALUE(cfi_cache_mb_limit, offs_cfi_cache_limit());
	OFFS_SHOW_VALUE(cfi_tables, cfi_ents);
	OFFS_SHOW_VALUE(cfi_bytes, cfi_bytes);
	OFFS_SHOW_VALUE(cfi_builds_pending, cfi_jobs);
	OFFS_SHOW_CFI(built);
	OFFS_SHOW_CFI(failed);
	OFFS_SHOW_CFI(too_big);
	OFFS_SHOW_CFI(deferred);
	OFFS_SHOW_CFI(evicted);
	OFFS_SHOW_CFI(build_ns);
	OFFS_SHOW_CFI(build_cpu_ns);
	OFFS_SHOW_CFI(build_cpu_max_ns);
	OFFS_SHOW_VALUE(cfi_build_ms, READ_ONCE(offs_cfi_build_ms));
	OFFS_SHOW_CFI(over_work);
	OFFS_SHOW_CFI(over_time);
	OFFS_SHOW_CFI(cancelled);
	OFFS_SHOW_CFI(throttled);
	OFFS_SHOW_CFI(failed_known);
	OFFS_SHOW_U64(wobj_dropped);
	OFFS_SHOW_U64(wobj_fd_closed);
	OFFS_SHOW_VALUE(blockers, READ_ONCE(offs_blockers));
	OFFS_SHOW_VALUE(blocker_edges, sum.nedges);
	OFFS_SHOW_U64(blocker_looked);
	OFFS_SHOW_U64(blocker_found);
	OFFS_SHOW_U64(blocker_unknown);
	OFFS_SHOW_U64(blocker_read_failed);
	OFFS_SHOW_U64(blocker_raced);
	OFFS_SHOW_U64(blocker_self);
	OFFS_SHOW_U64(blocker_fds);
	OFFS_SHOW_U64(blocker_fds_cut);
	OFFS_SHOW_U64(blocker_files_kept);
	OFFS_SHOW_U64(blocker_dropped);
	OFFS_SHOW_VALUE(blocker_share, offs_blk_share_level());
	OFFS_SHOW_U64(blocker_ns_total);
	OFFS_SHOW_VALUE(oncpu_sampling, READ_ONCE(offs_oncpu));
	OFFS_SHOW_U64(oncpu_sampled);
	OFFS_SHOW_U64(oncpu_missed);
	OFFS_SHOW_U64(oncpu_ns_total);
	OFFS_SHOW_VALUE(critical_pct, READ_ONCE(offs_critical_pct));
	OFFS_SHOW_U64(critical_ticks);
	OFFS_SHOW_VALUE(cpu_share_ppm, cpu_ppm);
	OFFS_SHOW_VALUE(sampler_cpu_ns, offs_sampler_cpu_ns());
	OFFS_SHOW_U64(snapshot_grow);
	OFFS_SHOW_ATOMIC(memory_bytes);
	OFFS_SHOW_ATOMIC(sym_lookups);
	OFFS_SHOW_ATOMIC(sym_hits);
	OFFS_SHOW_VALUE(sym_entries, offs_symcache_entries());
	OFFS_SHOW_VALUE(sym_max, OFFS_SYM_MAX);
	OFFS_SHOW_ATOMIC(sym_flushes);
	OFFS_SHOW_ATOMIC(class_lookups);
	OFFS_SHOW_ATOMIC(class_hits);
	OFFS_SHOW_ATOMIC(open_denied);
	OFFS_SHOW_VALUE(threads_rate, READ_ONCE(offs_threads_rate));
	OFFS_SHOW_ATOMIC(threads_throttled);
	return 0;
}
