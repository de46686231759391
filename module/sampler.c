// SPDX-License-Identifier: GPL-2.0
/*
 * sampler.c - the sampling kthread.
 *
 * Whenever a consumer is due (the default one hz times a second, each
 * session at its own rate: session.c) it visits every thread on the host
 * that a consumer due then wants (kernel threads unless kthreads=0).  A
 * kthread rather than a timer: it may sleep, which the table (mutex,
 * GFP_KERNEL) and, later, user stack walks need.
 *
 * A tick walks every thread under RCU (one read-side section, unless the
 * scheduler asks for the CPU: below).  A thread that has not changed since
 * its cached capture (threadcache.c) is counted right there: a hash lookup, the
 * fields that say it has not run, its names, and an increment on its
 * record that is folded into the table once at the end of the tick
 * (table.c, offs_table_fold()).  No reference, no lock, no clock read per
 * thread.  Every other thread gets a reference and is visited after the
 * walk, outside RCU: pinned, unwound, classified and recorded, so nothing
 * heavy runs under RCU and the visits may sleep.  The cost of a tick is
 * thus a * threads + b * changed threads, with a small a
 * (docs/BENCHMARKS.md).
 *
 * The walk lets the scheduler in when it asks (offs_walk_yield()): on a
 * kernel that does not preempt kernel code (PREEMPT_NONE, VOLUNTARY) a
 * walk of 100,000 threads would otherwise keep its CPU for the whole pass.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/wait.h>
#include <linux/ktime.h>
#include <linux/hrtimer.h>
#include <linux/sched/clock.h>
#include <linux/random.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "session.h"
#include "threadcache.h"
#include "ustack.h"
#include "wobj.h"
#include "blocker.h"
#include "kholder.h"
#include "cgroup.h"
#include "oncpu.h"
#include "pin.h"
#include "sampler.h"
#include "upy.h"
#include "pystack.h"

static struct task_struct *offs_sampler_task;
static DECLARE_WAIT_QUEUE_HEAD(offs_sampler_wq);
static bool offs_kicked;
static bool offs_woken;

/* Sampler-private state (only the sampler kthread touches it). */
static struct task_struct **offs_snap;	/* every thread, in walk order */
static struct offs_snap_out *offs_snap_out;	/* what each visit found */
static unsigned int *offs_todo;		/* indexes of threads to visit */
static unsigned int *offs_lead;		/* indexes of group leaders */
static struct offs_rec **offs_fast_recs;	/* records with pending samples */
static unsigned int offs_snap_cap;
static unsigned long offs_ips[OFFS_MAX_DEPTH_LIMIT];
static unsigned long offs_uips[OFFS_MAX_DEPTH_LIMIT];
static struct offs_py_frame offs_pyf[OFFS_MAX_DEPTH_LIMIT];
static char offs_wobj_buf[OFFS_WOBJ_MAX];

#define OFFS_SNAP_MIN	1024U

#define OFFS_SNAP_SLOT	(sizeof(*offs_snap) + sizeof(*offs_snap_out) + \
			 sizeof(*offs_todo) + sizeof(*offs_lead) + \
			 sizeof(*offs_fast_recs))

static void offs_snap_free(void)
{
	atomic64_sub(offs_snap_cap * OFFS_SNAP_SLOT, &offs_stats.memory_bytes);
	kvfree(offs_snap);
	kvfree(offs_snap_out);
	kvfree(offs_todo);
	kvfree(offs_lead);
	kvfree(offs_fast_recs);
	offs_snap = NULL;
	offs_snap_out = NULL;
	offs_todo = NULL;
	offs_lead = NULL;
	offs_fast_recs = NULL;
	offs_snap_cap = 0;
}

static int offs_snap_grow(unsigned int want)
{
	unsigned int cap = max(want + want / 4, OFFS_SNAP_MIN);
	struct offs_snap_out *o;
	struct task_struct **n;
	struct offs_rec **r;
	unsigned int *d, *l;

	n = kvmalloc_array(cap, sizeof(*n), GFP_KERNEL);
	o = kvmalloc_array(cap, sizeof(*o), GFP_KERNEL);
	d = kvmalloc_array(cap, sizeof(*d), GFP_KERNEL);
	l = kvmalloc_array(cap, sizeof(*l), GFP_KERNEL);
	r = kvmalloc_array(cap, sizeof(*r), GFP_KERNEL);
	if (!n || !o || !d || !l || !r) {
		kvfree(n);
		kvfree(o);
		kvfree(d);
		kvfree(l);
		kvfree(r);
		return -ENOMEM;
	}
	offs_snap_free();
	offs_snap = n;
	offs_snap_out = o;
	offs_todo = d;
	offs_lead = l;
	offs_fast_recs = r;
	offs_snap_cap = cap;
	atomic64_add(cap * OFFS_SNAP_SLOT, &offs_stats.memory_bytes);
	return 0;
}

/* What one walk found (offs_walk()). */
struct offs_walk {
	unsigned int n;		/* threads in offs_snap[] */
	unsigned int ntodo;	/* ... of which to visit: offs_todo[] */
	unsigned int nlead;	/* ... group leaders: offs_lead[] */
	unsigned int nfast;	/* records in offs_fast_recs[] */
	unsigned int hits;	/* threads counted in the walk */
	unsigned int kthreads;	/* skipped: kernel threads */
	unsigned int cgroup;	/* skipped: outside the cgroup parameter */
	bool cut;		/* the walk could not go on after a pause, */
	pid_t cut_tgid;		/* ... in this process */
};

/* Threads walked between two looks at need_resched(). */
#define OFFS_WALK_BATCH	32

/*
 * Leave the RCU read-side section for the scheduler in the middle of the
 * walk, at thread t of process g, and come back.  The references keep g
 * and t from being freed meanwhile; whether the walk can go on from t
 * depends on both still being on the task lists: a task leaves them (and
 * its pid, which pid_alive() tests) in one step under tasklist_lock
 * (__unhash_process()), and once unlinked its list pointers are only
 * good for readers that were inside RCU when it happened.  An exec by a
 * non-leader thread (de_thread()) puts that thread in g's place on the
 * process list while g keeps a pid until it is released; g stops being
 * the leader (exit_signal = -1) in the same tasklist_lock section, so that
 * is checked too.  Returns false when either left: the walk ends there.
 * Called with rcu_read_lock() held and returns with it held; sleeps in
 * between.
 */
static bool offs_walk_yield(struct task_struct *g, struct task_struct *t)
{
	bool alive;

	get_task_struct(g);
	get_task_struct(t);
	rcu_read_unlock();
	cond_resched();
	rcu_read_lock();
	alive = pid_alive(g) && thread_group_leader(g) && pid_alive(t);
	put_task_struct(t);
	put_task_struct(g);
	return alive;
}

/*
 * One pass over every thread under RCU (see the top of this file).  Each
 * thread gets its slot in offs_snap[] (the pointer is only compared after
 * the walk, blocker.c) and offs_snap_out[]; those sampled but not counted
 * here are referenced and listed in offs_todo[].  If the arrays are too small, what
 * was taken and counted is given back, they grow and the walk starts over;
 * if growing fails, the threads that fit are sampled.
 */
static void offs_walk(struct offs_walk *w, bool kthreads, struct cgroup *target,
		      unsigned int sel, bool any)
{
	unsigned int m;
	struct task_struct *g, *t;
	struct offs_snap_out *out;
	struct offs_rec *rec;
	unsigned int seen, i, k;
	/* Parents are only read for wait4()'s holders (blocker.c). */
	bool parents = READ_ONCE(offs_blockers);
	bool first;
	int tries;

	for (tries = 0; ; tries++) {
		memset(w, 0, sizeof(*w));
		seen = 0;
		k = 0;
		/*
		 * The task list, a task's group leader and css_set are
		 * RCU-protected; nothing below sleeps or takes a lock, but
		 * for the scheduler's turns in offs_walk_yield().
		 */
		rcu_read_lock();
		for_each_process_thread(g, t) {
			if (!(++k % OFFS_WALK_BATCH) && need_resched()) {
				OFFS_STAT_ADD(walk_breaks, 1);
				w->cut_tgid = g->tgid;
				if (!offs_walk_yield(g, t)) {
					/* The threads from t on wait for the next tick. */
					w->cut = true;
					goto walked;
				}
			}
			if (t == current)
				continue;
			if (seen++ >= offs_snap_cap)
				continue;
			out = &offs_snap_out[w->n];
			offs_snap[w->n] = t;
			/*
			 * Field by field: srec[] is written by the visit only
			 * (read for the sessions in smask), which saves a
			 * few of the ~130 instructions a thread costs here.
			 */
			out->rec = NULL;
			out->smask = 0;
			out->tid = t->pid;
			out->tgid = t->tgid;
			out->ptgid = 0;
			out->running = false;
			out->active = false;
			out->visited = false;
			/*
			 * blocker.c's end of tick looks at processes only:
			 * their main threads, and for wait4() whose child each
			 * is.  Not at kernel threads: no one's child, holding
			 * no pipe or socket.
			 */
			if (t == g && !(READ_ONCE(t->flags) & PF_KTHREAD)) {
				offs_lead[w->nlead++] = w->n;
				if (parents)
					out->ptgid = rcu_dereference(t->real_parent)->tgid;
			}
			if (!kthreads && (READ_ONCE(t->flags) & PF_KTHREAD)) {
				w->kthreads++;
				goto next;
			}
			/* The consumers that want t (session.c). */
			m = 0;
			if (!(sel & OFFS_SLOT_DEFAULT))
				;
			else if (!target || offs_task_in_cgroup(t, target))
				m = OFFS_SLOT_DEFAULT;
			else
				w->cgroup++;
			if (sel & ~OFFS_SLOT_DEFAULT)
				m |= offs_sess_match(t, sel);
			out->smask = m;
			/*
			 * Not wanted at this tick, but maybe at the next by
			 * another consumer: its cache entry stays (seen).
			 */
			if (!m && any)
				offs_tc_touch(t);
			if (m) {
				out->visited = true;
				/* Only the default consumer counts in the walk. */
				rec = m == OFFS_SLOT_DEFAULT ?
				      offs_tc_walk_hit(t, &first) : NULL;
				if (rec) {
					out->rec = rec;
					if (first)
						offs_fast_recs[w->nfast++] = rec;
					w->hits++;
				} else {
					get_task_struct(t);
					offs_todo[w->ntodo++] = w->n;
				}
			}
next:
			w->n++;
		}
walked:
		rcu_read_unlock();
		if (seen <= w->n || tries >= 2)
			return;
		for (i = 0; i < w->ntodo; i++)
			put_task_struct(offs_snap[offs_todo[i]]);
		offs_table_unpend(offs_fast_recs, w->nfast);
		OFFS_STAT_ADD(snapshot_grow, 1);
		if (offs_snap_grow(seen))
			tries = 1;	/* out of memory: one last partial pass */
	}
}

/*
 * Cache hits cost little more than two clock reads on bare metal, so only
 * one visit in OFFS_TIME_EVERY is timed from its start (thread_ns_hit is
 * estimated from those).  Full captures read the clock eight times (their
 * parts are timed too), about 5% of a cold tick in make bench: one in
 * OFFS_FULL_TIME_EVERY is timed, from just after the cache lookup, and
 * counts for that many (offsample.h).
 */
#define OFFS_TIME_EVERY	16

/*
 * Which full captures are timed: every OFFS_FULL_TIME_EVERY-th from a
 * random start each tick.  A fixed start would time the same threads
 * tick after tick (a process's first thread, which builds its maps, or
 * never it), and the estimates would be biased.
 */
static unsigned int offs_full_seq;

/*
 * Captures of one thread in a visit: it ran while unwound, left its CPU
 * before that CPU could capture it, or was walked against mappings that
 * changed (the last try keeps what it got).
 */
#define OFFS_CAPTURE_TRIES	3

/* Key fields of every open consumer (offs_sess_keys()), for this tick. */
static unsigned int offs_tick_keys;

/*
 * The sample a visit fills, one at a time (the sampler's; the IPI of
 * oncpu.c fills it while the sampler waits).  Not on the stack: kernels
 * built with INIT_STACK_ALL_ZERO (Debian's) zeroed its 360 bytes at every
 * visit, 64 instructions, a third of a warm visit (issue 52).  So each
 * path sets what it reads: a visit of an unchanged thread its consumers
 * and names (offs_sample_names()), a capture offs_sample_reset()'s fields,
 * offs_pin_capture()'s, and the branch's own (names; registers and
 * arguments when s->user; srec[] in offs_table_record()).
 */
static struct offs_sample offs_vsample;

/*
 * What a capture reads that offs_pin_capture() does not set each time, or
 * that only some paths set: back to what a new capture starts from.
 */
static void offs_sample_reset(struct offs_sample *s)
{
	s->degraded = false;
	s->kcache = true;
	s->ips_buf = offs_ips;
	s->uips = NULL;
	s->umm = NULL;
	s->pyf = NULL;
	s->pytruncated = false;
	s->ns_kstack = 0;
	s->ns_uwalk = 0;
	s->ustack = NULL;
	s->ustack_memo = false;
	s->wobj_str = NULL;
	memset(&s->wobj_addr, 0, sizeof(s->wobj_addr));
	memset(&s->fx, 0, sizeof(s->fx));
	s->rec = NULL;
}

/* Visit snapshot entry idx; what it found goes to offs_snap_out[idx]. */
static void offs_visit(unsigned int idx, unsigned int max_depth,
		       unsigned int config_seq)
{
	struct task_struct *t = offs_snap[idx];
	struct offs_snap_out *out = &offs_snap_out[idx];
	static unsigned int seq;
	bool timed = !(seq++ % OFFS_TIME_EVERY);
	u64 t0 = timed ? local_clock() : 0;
	struct offs_tc_ent *ent = offs_tc_lookup(t);
	struct offs_sample *s = &offs_vsample;
	enum offs_pin pin;
	unsigned int reason;
	u64 t1, t2;
	int attempt;

	memset(out->srec, 0, sizeof(out->srec));
	s->smask = out->smask;
	if (ent && offs_tc_unchanged(t, ent)) {
		/*
		 * Has not run since its last sample: same stacks, same reason.
		 * Reads of the sample here: its names and its consumers.
		 */
		offs_sample_names(t, s);
		out->rec = offs_table_record_again(s, offs_tc_hit(ent));
		memcpy(out->srec, s->srec, sizeof(out->srec));
		OFFS_STAT_ADD(cache_hits, 1);
		if (timed) {
			OFFS_STAT_ADD(hits_timed, 1);
			OFFS_STAT_ADD(hit_ns_timed, local_clock() - t0);
		}
		/* Still waiting on the same lock; its holder may have changed. */
		offs_blk_note(t, &offs_tc_hit(ent)->fx, out->rec, out->srec,
			      idx, offs_tc_ncsw(ent));
		return;
	}
	offs_sample_reset(s);
	s->timed = !(offs_full_seq++ % OFFS_FULL_TIME_EVERY);
	if (s->timed)
		t0 = local_clock();

	/*
	 * User stacks are walked while the thread is pinned, from inside its
	 * address space: enter it first (this may sleep; consecutive threads
	 * of a process share it).
	 */
	if (READ_ONCE(offs_user_stacks) &&
	    !(READ_ONCE(t->flags) & OFFS_PF_USER_WORKERS)) {
		s->umm = offs_uwin_enter(t);
		s->uips = offs_uips;
		s->pyf = offs_pyf;
	}
	t1 = s->timed ? local_clock() : 0;
	/*
	 * A thread that ran while unwound, or left its CPU before that CPU
	 * could capture it, gets another chance; so does one walked against
	 * a copy of its process's mappings that had changed, with a new copy.
	 */
	for (attempt = 0; attempt < OFFS_CAPTURE_TRIES; attempt++) {
		pin = offs_pin_capture(t, s, max_depth);
		if (s->blocked_raced)
			OFFS_STAT_ADD(blocked_raced, 1);
		/* No lock held here: the IPI waits for the other CPU. */
		if (pin == OFFS_PIN_ONCPU && READ_ONCE(offs_oncpu))
			pin = offs_oncpu_capture(t, s, max_depth);
		if (pin == OFFS_PIN_RACED)
			continue;
		if (!offs_uwin_recapture(s, attempt + 1 < OFFS_CAPTURE_TRIES))
			break;
	}
	t2 = s->timed ? local_clock() : 0;
	switch (pin) {
	case OFFS_PIN_ONCPU:
		/* Not sampled (oncpu=0 or missed), still active for GAPP. */
		OFFS_STAT_ADD(oncpu, 1);
		out->running = true;
		out->active = true;
		offs_blk_note_running(t, idx, task_cpu(t));
		break;
	case OFFS_PIN_CPU:
		/* Running: never cached, no wait object, waits for no lock. */
		OFFS_STAT_ADD(oncpu, 1);
		out->running = true;
		out->active = true;
		offs_blk_note_running(t, idx, task_cpu(t));
		offs_sample_names(t, s);
		if (s->user && s->uips)
			s->ustack = offs_ustack_capture(s);
		offs_table_record(s, NULL);
		out->rec = s->rec;
		memcpy(out->srec, s->srec, sizeof(out->srec));
		break;
	case OFFS_PIN_EXITING:
		OFFS_STAT_ADD(exiting, 1);
		break;
	case OFFS_PIN_RACED:
		OFFS_STAT_ADD(rq_raced, 1);
		break;
	case OFFS_PIN_BLOCKED:
	case OFFS_PIN_RUNQ:
		OFFS_STAT_ADD(stacks_unwound, 1);
		if (s->truncated)
			OFFS_STAT_ADD(stacks_truncated, 1);
		if (!s->depth)
			OFFS_STAT_ADD(stacks_empty, 1);
		offs_sample_names(t, s);
		if (s->user && s->uips)
			s->ustack = offs_ustack_capture(s);
		if (s->user && (offs_tick_keys & OFFS_KEY_WOBJ) &&
		    offs_wobj_describe(t, s, offs_wobj_buf,
				       sizeof(offs_wobj_buf), &s->wobj_addr))
			s->wobj_str = offs_wobj_buf;
		offs_blk_fxwait(s, &s->fx);
		/*
		 * A runnable thread waits for a CPU, not for its peer; the
		 * descriptor is looked up only when holders are wanted.
		 */
		if (pin == OFFS_PIN_BLOCKED && READ_ONCE(offs_blockers))
			offs_kh_peer_wait(t, s, &s->fx);
		offs_kh_flock_wait(s, &s->fx);
		/* A Python thread waiting for the GIL: the GIL is the lock. */
		offs_pystack_gil_wait(s, &s->fx);
		if (s->fx.cand == OFFS_FX_GIL && s->wobj_str) {
			strscpy(offs_wobj_buf, "futex(gil)", sizeof(offs_wobj_buf));
			memset(&s->wobj_addr, 0, sizeof(s->wobj_addr));
		}
		/* Run-queue waiters change all the time: not cached. */
		if (ent && pin == OFFS_PIN_BLOCKED) {
			reason = offs_table_record(s, offs_tc_hit(ent));
			offs_blk_kwait(s, reason, &s->fx);
			offs_tc_store(ent, s, config_seq);
			ent = NULL;
		} else {
			reason = offs_table_record(s, NULL);
			offs_blk_kwait(s, reason, &s->fx);
		}
		out->rec = s->rec;
		memcpy(out->srec, s->srec, sizeof(out->srec));
		out->active = pin == OFFS_PIN_RUNQ;
		/*
		 * A run-queue waiter was woken: it waits for no lock now, but
		 * for the thread on its CPU.
		 */
		if (pin == OFFS_PIN_BLOCKED)
			offs_blk_note(t, &s->fx, s->rec, s->srec, idx, s->ncsw);
		else
			offs_blk_note_runq(t, task_cpu(t), s->rec, s->srec, idx);
		break;
	}
	if (ent)
		offs_tc_invalidate(ent);
	OFFS_STAT_ADD(cache_misses, 1);
	if (!s->timed)
		return;
	OFFS_STAT_ADD(full_timed, 1);
	OFFS_STAT_ADD(full_ns_total,
		      (local_clock() - t0) * OFFS_FULL_TIME_EVERY);
	OFFS_STAT_ADD(full_enter_ns, (t1 - t0) * OFFS_FULL_TIME_EVERY);
	OFFS_STAT_ADD(full_pin_ns, (t2 - t1) * OFFS_FULL_TIME_EVERY);
	OFFS_STAT_ADD(full_kstack_ns, s->ns_kstack * OFFS_FULL_TIME_EVERY);
	OFFS_STAT_ADD(full_uwalk_ns, s->ns_uwalk * OFFS_FULL_TIME_EVERY);
}

/*
 * How many of the walk's threads belong to processes it saw whole: all,
 * unless the walk was cut in the middle of a process (GAPP must not judge
 * that one from some of its threads).
 */
static unsigned int offs_walk_whole(const struct offs_walk *w)
{
	unsigned int n = w->n;

	if (w->cut)
		while (n && offs_snap_out[n - 1].tgid == w->cut_tgid)
			n--;
	return n;
}

/*
 * GAPP's criticality (Zhou et al., "GAPP: A Fast Profiler for Detecting
 * Serialization Bottlenecks", 2018), at the end of a tick.  The threads of
 * a process come together in the walk (for_each_process_thread()).
 * For a process with N threads sampled at this tick, A of them active
 * (running or waiting for a CPU): when 0 < A and A <= N * critical_pct /
 * 100, few threads carry the process, and each active thread's record
 * gets 1/A (in millionths); a running thread that was not sampled
 * (oncpu=0, or it left its CPU) counts in A but has no record.  Kernel
 * threads and single-threaded processes are never critical at the default
 * 50% (A <= N / 2 needs N >= 2).  Only visited threads can be active
 * (those counted in the walk had not run), so only the processes of the
 * ntodo visited threads (offs_todo[], in walk order) are looked at, and
 * of those only threads before index n (offs_walk_whole()).
 */
/* Add w to each record o was counted in (offs_table_lock held). */
static void offs_crit_add(struct offs_snap_out *o, u64 w)
{
	int i;

	if (o->rec)
		o->rec->crit_micro += w;
	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		if (o->srec[i])
			o->srec[i]->crit_micro += w;
}

static void offs_critical_tick_end(unsigned int n, unsigned int ntodo)
{
	unsigned int pct = READ_ONCE(offs_critical_pct);
	unsigned int i, j, k, t, nthr, nact, done = 0;
	bool locked = false;
	pid_t tgid;
	u64 w;

	for (t = 0; t < ntodo; t++) {
		i = offs_todo[t];
		if (i < done || i >= n || !offs_snap_out[i].active)
			continue;
		/* The process's threads: [i, j) around this one. */
		tgid = offs_snap_out[i].tgid;
		while (i > done && offs_snap_out[i - 1].tgid == tgid)
			i--;
		nthr = 0;
		nact = 0;
		for (j = i; j < n && offs_snap_out[j].tgid == tgid; j++) {
			nthr += offs_snap_out[j].visited;
			nact += offs_snap_out[j].active;
		}
		done = j;
		if (nact * 100ULL > (u64)nthr * pct)
			continue;
		/* One hold for the whole tick, short additions. */
		if (!locked) {
			mutex_lock(&offs_table_lock);
			locked = true;
		}
		w = div_u64(1000000, nact);
		for (k = i; k < j; k++)
			if (offs_snap_out[k].active)
				offs_crit_add(&offs_snap_out[k], w);
		OFFS_STAT_ADD(critical_ticks, 1);
	}
	if (locked)
		mutex_unlock(&offs_table_lock);
}

static void offs_tick(u64 now)
{
	unsigned int k, idx, max_depth, config_seq, sel;
	bool late, any;
	struct offs_walk w;
	struct cgroup *target;
	bool kthreads;
	u64 t0, tw, t1, t2, t3, dt;

	t0 = ktime_get_ns();
	/*
	 * The parameters' sequence before the parameters (acquire, pairs with
	 * offs_config_changed()): captures are cached under it, so one taken
	 * with a value changed during the tick is not served after it.
	 */
	config_seq = smp_load_acquire(&offs_config_seq);
	max_depth = clamp(READ_ONCE(offs_max_depth), 1U,
			  (unsigned int)OFFS_MAX_DEPTH_LIMIT);
	kthreads = READ_ONCE(offs_kthreads);

	target = offs_cgroup_target_get();
	sel = offs_table_tick_begin(now, &late);
	if (late)
		OFFS_STAT_ADD(ticks_overrun, 1);
	/* Sessions only change between ticks (offs_tick_lock). */
	any = offs_sess_count_open();
	offs_tick_keys = offs_sess_keys();
	offs_tc_tick_begin(config_seq);
	offs_full_seq = get_random_u32();
	tw = ktime_get_ns();
	offs_walk(&w, kthreads, target, sel, any);
	OFFS_STAT_ADD(kthreads_skipped, w.kthreads);
	OFFS_STAT_ADD(cgroup_skipped, w.cgroup);
	OFFS_STAT_ADD(threads_visited, w.hits + w.ntodo);
	OFFS_STAT_ADD(cache_hits, w.hits);
	OFFS_STAT_ADD(cache_hits_walk, w.hits);
	OFFS_STAT_ADD(walk_cut, w.cut);
	t1 = ktime_get_ns();
	for (k = 0; k < w.ntodo; k++) {
		idx = offs_todo[k];
		offs_visit(idx, max_depth, config_seq);
		/* An exited process's memory is not kept for the tick. */
		offs_uwin_end_if_orphaned();
		/* From here on offs_snap[idx] is only compared (blocker.c). */
		put_task_struct(offs_snap[idx]);
		if ((k & 63) == 63)
			cond_resched();
	}
	t2 = ktime_get_ns();
	offs_table_fold(offs_fast_recs, w.nfast);
	offs_blk_tick_end(offs_snap, offs_snap_out, w.n, offs_lead, w.nlead);
	offs_critical_tick_end(offs_walk_whole(&w), w.ntodo);
	offs_uwin_tick_end(false);
	offs_root_leave();
	/*
	 * After a cut walk the threads not reached were not marked seen: keep
	 * their entries (a later whole tick sweeps, offs_tc_sweep()), or
	 * they would all be captured in full again.
	 */
	if (!w.cut)
		offs_tc_sweep(false);
	offs_table_tick_end();
	offs_cgroup_target_put(target);

	t3 = ktime_get_ns();
	dt = t3 - t0;
	OFFS_STAT_ADD(tick_walk_ns_total, t1 - tw);
	OFFS_STAT_ADD(tick_visit_ns_total, t2 - t1);
	OFFS_STAT_ADD(tick_end_ns_total, t3 - t2);
	OFFS_STAT_ADD(ticks, 1);
	OFFS_STAT_ADD(tick_ns_total, dt);
	WRITE_ONCE(offs_stats.tick_ns_last, dt);
	if (dt > offs_stats.tick_ns_max)
		WRITE_ONCE(offs_stats.tick_ns_max, dt);
}

static int offs_sampler_fn(void *unused)
{
	u64 due, now;

	while (!kthread_should_stop()) {
		/* The consumers' next due time (session.c): theirs, not a rate. */
		due = offs_sess_next_due();
		now = ktime_get_ns();
		if (due <= now) {
			offs_tick(now);
			continue;
		}
		/* KTIME_MAX: no timer, wait for a kick (no consumer is due). */
		if (due == U64_MAX)
			offs_uwin_tick_end(true);
		wait_event_interruptible_hrtimeout(offs_sampler_wq,
						   kthread_should_stop() ||
						   READ_ONCE(offs_kicked) ||
						   READ_ONCE(offs_woken),
						   due == U64_MAX ? KTIME_MAX :
						   ns_to_ktime(due - now));
		WRITE_ONCE(offs_woken, false);
		if (READ_ONCE(offs_kicked)) {
			/* hz or enabled changed: the default consumer is due now. */
			WRITE_ONCE(offs_kicked, false);
			offs_sess_restart();
		}
	}
	/* Files are named from each process's root (upath.c): let go. */
	offs_uwin_tick_end(true);
	offs_root_exit();
	return 0;
}

/* A parameter changed: make the sampler look at it now. */
void offs_sampler_kick(void)
{
	WRITE_ONCE(offs_kicked, true);
	wake_up(&offs_sampler_wq);
}

/*
 * A session came or changed (session.c): look at the due times again,
 * without moving the default consumer's schedule.
 */
void offs_sampler_wake(void)
{
	WRITE_ONCE(offs_woken, true);
	wake_up(&offs_sampler_wq);
}

/* Wait for a tick in progress to finish (see offs_tick_lock in table.c). */
int offs_sampler_quiesce(void)
{
	return offs_table_quiesce();
}

u64 offs_sampler_cpu_ns(void)
{
	struct task_struct *t = READ_ONCE(offs_sampler_task);

	return t ? READ_ONCE(t->se.sum_exec_runtime) : 0;
}

int offs_sampler_start(void)
{
	struct task_struct *t;
	int err;

	err = offs_blk_init();
	if (err)
		return err;
	err = offs_snap_grow(OFFS_SNAP_MIN);
	if (err) {
		offs_blk_exit();
		return err;
	}
	t = kthread_run(offs_sampler_fn, NULL, "offsample");
	if (IS_ERR(t)) {
		offs_snap_free();
		offs_blk_exit();
		return PTR_ERR(t);
	}
	WRITE_ONCE(offs_sampler_task, t);
	return 0;
}

void offs_sampler_stop(void)
{
	kthread_stop(offs_sampler_task);
	WRITE_ONCE(offs_sampler_task, NULL);
	offs_snap_free();
	offs_blk_exit();
}
