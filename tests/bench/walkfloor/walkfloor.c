// SPDX-License-Identifier: GPL-2.0
/*
 * offsample_walkfloor - the floor of a sampler tick, for `make bench` only.
 *
 * Loading it walks every thread `walks` times, interval_ms apart (9 Hz by
 * default, like the benchmark's ticks), the way offsample's tick walks
 * them (sampler.c, offs_walk()): one RCU read-side section,
 * for_each_process_thread(), and for each thread the fields a tick reads
 * to decide that the thread has not changed (flags, ids, start time, state
 * word, on_rq, on_cpu, switch counts, exit state, its name and its
 * process's, its cgroup).  Nothing else: no lookup, no write, no
 * reference.  The time of the walks is left in the read-only parameters
 * threads (per walk, the last one) and ns_total (all walks), under
 * /sys/module/offsample_walkfloor/parameters/.  It is never installed.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/cgroup.h>
#include <linux/ktime.h>
#include <linux/delay.h>
#include <linux/string.h>

#include "compat.h"

static unsigned int walks = 18;
module_param(walks, uint, 0444);
MODULE_PARM_DESC(walks, "walks to time (default 18)");

static unsigned int interval_ms = 111;
module_param(interval_ms, uint, 0444);
MODULE_PARM_DESC(interval_ms, "pause between walks (ms, default 111)");

static unsigned int threads;
module_param(threads, uint, 0444);
MODULE_PARM_DESC(threads, "threads in the last walk (result)");

static unsigned long long ns_total;
module_param(ns_total, ullong, 0444);
MODULE_PARM_DESC(ns_total, "wall time of all walks (ns, result)");

static unsigned long sink;

static unsigned long floor_one(struct task_struct *t)
{
	unsigned long v, c[2], l[2];

	v = READ_ONCE(t->flags) ^ t->pid ^ t->tgid ^ t->start_time;
	v ^= offs_task_state(t);
	smp_rmb();
	v ^= READ_ONCE(t->on_rq) ^ offs_task_sched_delayed(t);
	smp_rmb();
	v ^= smp_load_acquire(&t->on_cpu);
	v ^= READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
	v ^= READ_ONCE(t->exit_state);
	memcpy(c, t->comm, sizeof(c));
	memcpy(l, READ_ONCE(t->group_leader)->comm, sizeof(l));
	v ^= c[0] ^ c[1] ^ l[0] ^ l[1];
	v ^= cgroup_id(task_dfl_cgroup(t));
	return v;
}

static int __init floor_init(void)
{
	struct task_struct *g, *t;
	unsigned int i, n;
	unsigned long v = 0;
	u64 t0;

	for (i = 0; i < walks; i++) {
		if (i)
			msleep(interval_ms);
		n = 0;
		t0 = ktime_get_ns();
		/* As the sampler: the task list is RCU-protected. */
		rcu_read_lock();
		for_each_process_thread(g, t) {
			if (t == current)
				continue;
			v ^= floor_one(t);
			n++;
		}
		rcu_read_unlock();
		ns_total += ktime_get_ns() - t0;
		threads = n;
	}
	WRITE_ONCE(sink, v);
	return 0;
}

static void __exit floor_exit(void)
{
}

module_init(floor_init);
module_exit(floor_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("offsample benchmark: an empty walk of every thread");
