// SPDX-License-Identifier: GPL-2.0
/*
 * session.c - consumers that never disturb each other.
 *
 * The default consumer is what the module's parameters describe: the
 * stacks, drain and control files count at hz, under key, in the cgroup
 * parameter's subtree, while enabled.  A session (an open
 * /proc/offsample/session, proc_stacks.c) is another consumer: it counts
 * into a generation of its own (its window) at its own rate, under its
 * own key, restricted to a cgroup or a process if it asks, from the
 * moment it is opened; reading it hands over the window and starts the
 * next one.  Nothing a session does changes another consumer's counts or
 * settings: a recording no longer resets or drains what a cron job will
 * read, nor changes its rate.
 *
 * Each consumer is due every 1/rate seconds (its own clock: due times one
 * period apart); the sampler ticks when the earliest is due, and a tick
 * counts for every consumer due within half the shortest period of it, so
 * that consumers share ticks and each one's ticks per second are its own
 * rate, whatever the others ask (a consumer whose tick came a period late
 * starts again from then: ticks_overrun).
 * A thread is visited at a tick when a selected consumer wants it, and
 * counted in each of those consumers' generations under its key.
 *
 * Bounded: at most max_sessions sessions (more: EBUSY, counted), each
 * window by a quarter of max_stacks records (table.c, offs_gen_max()); a
 * session ends when its file is closed (also when its reader dies).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "cgroup.h"
#include "sampler.h"
#include "session.h"

struct offs_session *offs_sessions[OFFS_SESSIONS_MAX];
/* When the default consumer is due next (sampler only; monotonic ns). */
static u64 offs_default_due;

static u64 offs_period(unsigned int hz)
{
	return NSEC_PER_SEC / clamp(hz, 1U, 1000U);
}

/*
 * When the sampler must tick next: the earliest time a consumer is due,
 * U64_MAX when none wants samples (the sampler waits for a kick).
 * offs_table_lock: sessions come, go and change under it.
 */
u64 offs_sess_next_due(void)
{
	u64 due = U64_MAX;
	int i;

	mutex_lock(&offs_table_lock);
	if (READ_ONCE(offs_enabled))
		due = offs_default_due;
	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		if (offs_sessions[i])
			due = min(due, offs_sessions[i]->due);
	mutex_unlock(&offs_table_lock);
	return due;
}

/* hz or enabled changed (a kick): the default consumer is due now. */
void offs_sess_restart(void)
{
	WRITE_ONCE(offs_default_due, ktime_get_ns());
}

/*
 * Is a consumer with this period due at now (with slack: a tick close
 * enough serves it, so that consumers of different rates share ticks)?
 * Then its next due time is one period on, so that its rate stays exact
 * over time; after a stall it starts again from now (no burst).
 */
static bool offs_sess_due(u64 *due, u64 period, u64 now, u64 slack,
			  bool *late)
{
	if (*due > now + slack)
		return false;
	*due += period;
	if (*due <= now) {
		*due = now + period;
		*late = true;
	}
	return true;
}

/*
 * Which consumers this tick counts for, at now.  offs_tick_lock held:
 * the sessions cannot change.  *late: a consumer's tick came more than a
 * period late (the sampler did not keep up).
 */
unsigned int offs_sess_select(u64 now, bool *late)
{
	u64 slack = offs_period(READ_ONCE(offs_hz));
	unsigned int sel = 0;
	struct offs_session *se;
	int i;

	/* Half the shortest period of a consumer: ticks merge, never twice. */
	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		if (offs_sessions[i])
			slack = min(slack, offs_period(offs_sessions[i]->hz));
	slack /= 2;
	*late = false;
	if (READ_ONCE(offs_enabled) &&
	    offs_sess_due(&offs_default_due, offs_period(READ_ONCE(offs_hz)),
			  now, slack, late))
		sel |= OFFS_SLOT_DEFAULT;
	for (i = 0; i < OFFS_SESSIONS_MAX; i++) {
		se = offs_sessions[i];
		if (se && offs_sess_due(&se->due, offs_period(se->hz), now,
					slack, late))
			sel |= OFFS_SLOT_SESS(i);
	}
	return sel;
}

/*
 * What a capture must hold is what any open consumer's key needs (a wait
 * object for wobj), whichever consumers the tick counts for: the capture
 * is cached and counted again at later ticks, for all of them.
 */
unsigned int offs_sess_keys(void)
{
	unsigned int keys = READ_ONCE(offs_key_fields);
	int i;

	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		if (offs_sessions[i])
			keys |= offs_sessions[i]->key_fields;
	return keys;
}

/* Under rcu_read_lock() (the sampler's walk), offs_tick_lock held. */
unsigned int offs_sess_match(struct task_struct *t, unsigned int sel)
{
	unsigned int m = 0;
	struct offs_session *se;
	int i;

	for (i = 0; i < OFFS_SESSIONS_MAX; i++) {
		se = offs_sessions[i];
		if (!se || !(sel & OFFS_SLOT_SESS(i)))
			continue;
		/* Pointers compared only: task_tgid() is RCU-safe. */
		if (se->pid && task_tgid(t) != se->pid)
			continue;
		if (se->cg && !offs_task_in_cgroup(t, se->cg))
			continue;
		m |= OFFS_SLOT_SESS(i);
	}
	return m;
}

/* Sessions open now (exact under offs_tick_lock; else a racy count). */
unsigned int offs_sess_count_open(void)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		n += !!READ_ONCE(offs_sessions[i]);
	return n;
}

/*
 * A new session at the module's rate and key, counting from now, or an
 * ERR_PTR: -EBUSY (max_sessions open; for a group= reader, all but one),
 * -ENOMEM, -EINTR.
 */
struct offs_session *offs_sess_open(bool restricted)
{
	struct offs_session *se;
	struct offs_gen *gen;
	int err;

	se = kzalloc(sizeof(*se), GFP_KERNEL_ACCOUNT);
	if (!se)
		return ERR_PTR(-ENOMEM);
	se->hz = clamp(READ_ONCE(offs_hz), 1U, 1000U);
	se->key_fields = READ_ONCE(offs_key_fields);
	gen = offs_table_sess_gen();
	if (!gen) {
		kfree(se);
		return ERR_PTR(-ENOMEM);
	}
	err = offs_table_sess_add(se, gen, restricted);
	if (err) {
		offs_gen_put(gen);
		kfree(se);
		if (err == -EBUSY)
			atomic64_inc(&offs_stats.sessions_refused);
		return ERR_PTR(err);
	}
	atomic64_inc(&offs_stats.sessions_opened);
	/* Due at once; the default consumer's schedule is not moved. */
	offs_sampler_wake();
	return se;
}

/* A pid or cgroup reference held for a filter (ERR_PTR: none taken). */
static void offs_sess_put_filters(struct pid *pid, struct cgroup *cg)
{
	if (!IS_ERR_OR_NULL(pid))
		put_pid(pid);
	if (!IS_ERR_OR_NULL(cg))
		cgroup_put(cg);
}

/*
 * Settings, written to the session file: space-separated hz=N (1..1000;
 * a group= reader at most the module's hz), key=comm[,pid,tid,tname,wobj],
 * cgroup=PATH (relative to the writer's cgroup namespace; "/" for all),
 * pid=N (a process, numbered as in pidns, the namespace of the /proc the
 * file was opened through, as its output is; 0 for all).  Those not given
 * keep their values.  The window starts again.  Sleeps (cgroup lookup).
 */
int offs_sess_configure(struct offs_session *se, char *settings,
			struct pid_namespace *pidns, bool restricted)
{
	unsigned int hz = se->hz, keys = se->key_fields, v;
	struct cgroup *cg = ERR_PTR(-EINVAL);	/* not given */
	struct pid *pid = ERR_PTR(-EINVAL);	/* not given */
	struct offs_gen *gen;
	char *tok, *s = strim(settings);
	int err = 0;

	while ((tok = strsep(&s, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (!strncmp(tok, "hz=", 3)) {
			if (kstrtouint(tok + 3, 10, &v) || v < 1 || v > 1000)
				err = -EINVAL;
			else if (restricted && v > READ_ONCE(offs_hz))
				err = -EPERM;
			hz = v;
		} else if (!strncmp(tok, "key=", 4)) {
			if (offs_parse_key(tok + 4, &keys))
				err = -EINVAL;
		} else if (!strncmp(tok, "cgroup=", 7)) {
			if (!IS_ERR_OR_NULL(cg))
				cgroup_put(cg);
			cg = offs_cgroup_lookup(tok + 7);
			if (IS_ERR(cg))
				err = PTR_ERR(cg);
		} else if (!strncmp(tok, "pid=", 4)) {
			offs_sess_put_filters(pid, NULL);
			pid = NULL;
			if (kstrtouint(tok + 4, 10, &v) || v > PID_MAX_LIMIT) {
				err = -EINVAL;
			} else if (v) {
				/*
				 * find_pid_ns() and pid_task() need RCU; the
				 * reference keeps the struct pid, so that a
				 * number reused later is another process.
				 */
				rcu_read_lock();
				pid = find_pid_ns(v, pidns);
				pid = pid && pid_task(pid, PIDTYPE_TGID) ?
				      get_pid(pid) : NULL;
				rcu_read_unlock();
				if (!pid)
					err = -ESRCH;
			}
		} else {
			err = -EINVAL;
		}
		if (err)
			break;
	}
	if (!err) {
		gen = offs_table_sess_gen();
		err = gen ? 0 : -ENOMEM;
	}
	if (err) {
		offs_sess_put_filters(pid, cg);
		return err;
	}
	/* pid and cg come back as what to put: those replaced, or themselves. */
	err = offs_table_sess_settings(se, gen, hz, keys, &pid, &cg);
	offs_sess_put_filters(pid, cg);
	if (err)
		return err;
	/*
	 * Captures cached without a wait object may be needed with one.
	 * Parameter writes bump the sequence under the module's param lock:
	 * so does this.
	 */
	if (keys & OFFS_KEY_WOBJ) {
		kernel_param_lock(THIS_MODULE);
		offs_config_changed();
		kernel_param_unlock(THIS_MODULE);
	}
	offs_sampler_wake();
	return 0;
}

/* The window so far, handed to the reader; the next one starts now. */
struct offs_gen *offs_sess_window(struct offs_session *se)
{
	struct offs_gen *gen = offs_table_sess_gen();

	if (!gen)
		return ERR_PTR(-ENOMEM);
	return offs_table_sess_swap(se, gen);
}

void offs_sess_close(struct offs_session *se)
{
	struct offs_gen *gen;
	struct cgroup *cg;
	struct pid *pid;

	gen = offs_table_sess_remove(se, &cg, &pid);
	offs_gen_put(gen);
	offs_sess_put_filters(pid, cg);
	kfree(se);
}
