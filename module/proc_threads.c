// SPDX-License-Identifier: GPL-2.0
/*
 * proc_threads.c - /proc/offsample/threads: every thread right now, pinned
 * and unwound at read time, in FreeBSD "procstat -ka" columns with its
 * wait reason; all readers together rate-limited (threads_rate).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/idr.h>
#include <linux/sched/task.h>
#include <linux/ktime.h>
#include <linux/string.h>
#include <linux/kallsyms.h>
#include <linux/spinlock.h>
#include <linux/sched/signal.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "classify.h"
#include "pin.h"
#include "procfs.h"
#include "symcache.h"

/* ---- threads ---- */

struct offs_threads_priv {
	struct pid_namespace *ns;
	bool restricted;		/* a group= reader */
	unsigned long ips[OFFS_MAX_DEPTH_LIMIT];
	char sym[KSYM_SYMBOL_LEN];
};

/*
 * Readers of threads pin and unwind every thread (pi_lock with IRQs off,
 * the same work as a tick); all of them together may do it threads_rate
 * times per second, with up to a second's worth in a burst, so that
 * reading in a loop cannot become a host-wide CPU sink or keep the
 * threads' wakeups waiting on their pi_lock.  A reader over the rate
 * sleeps (killable) in its own read(2).  group= readers have a budget of
 * their own, so that they cannot make root's reads wait.
 */
static DEFINE_SPINLOCK(offs_tb_lock);
static u64 offs_tb_next[2];		/* when a budget is used up, ns */

#define OFFS_TB_MIN_SLEEP	(2 * NSEC_PER_MSEC)

static int offs_threads_throttle(bool restricted)
{
	unsigned int rate = max(READ_ONCE(offs_threads_rate), 1U);
	u64 *next = &offs_tb_next[restricted];
	u64 now, wait;

	spin_lock(&offs_tb_lock);
	now = ktime_get_ns();
	if (*next + NSEC_PER_SEC < now)
		*next = now - NSEC_PER_SEC;
	*next += NSEC_PER_SEC / rate;
	wait = *next > now ? *next - now : 0;
	spin_unlock(&offs_tb_lock);
	/* Short debts are paid by a later, longer sleep. */
	if (wait < OFFS_TB_MIN_SLEEP)
		return 0;
	atomic64_inc(&offs_stats.threads_throttled);
	schedule_timeout_killable(nsecs_to_jiffies(wait) + 1);
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/* First thread whose id (in the reader's namespace) is >= *pos. */
static struct task_struct *offs_threads_find(struct offs_threads_priv *p,
					     loff_t *pos)
{
	struct task_struct *t = NULL;
	struct pid *pid;
	int nr = *pos;

	if (*pos > PID_MAX_LIMIT)
		return NULL;
	/*
	 * The namespace's pid IDR walked in order, as find_ge_pid() does
	 * (not exported before 5.11, idr_get_next() is); it and pid_task()
	 * need RCU.
	 */
	rcu_read_lock();
	while ((pid = idr_get_next(&p->ns->idr, &nr))) {
		t = pid_task(pid, PIDTYPE_PID);
		if (t) {
			get_task_struct(t);
			*pos = pid_nr_ns(pid, p->ns);
			break;
		}
		nr = pid_nr_ns(pid, p->ns) + 1;
	}
	rcu_read_unlock();
	return t;
}

static void *offs_threads_start(struct seq_file *m, loff_t *pos)
{
	if (*pos == 0)
		return SEQ_START_TOKEN;
	return offs_threads_find(m->private, pos);
}

static void *offs_threads_next(struct seq_file *m, void *v, loff_t *pos)
{
	if (v != SEQ_START_TOKEN)
		put_task_struct(v);
	++*pos;
	return offs_threads_find(m->private, pos);
}

static void offs_threads_stop(struct seq_file *m, void *v)
{
	if (v && v != SEQ_START_TOKEN)
		put_task_struct(v);
}

static int offs_threads_show(struct seq_file *m, void *v)
{
	struct offs_threads_priv *p = m->private;
	struct task_struct *t = v;
	struct offs_frames_info info;
	struct offs_sample s = { .syscall = -1 };
	enum offs_pin pin;
	unsigned int i;
	char *plus;
	int err;

	if (v == SEQ_START_TOKEN) {
		seq_printf(m, "%5s %6s %-16s %-16s %s\n", "PID", "TID", "COMM",
			   "TDNAME", "KSTACK");
		return 0;
	}
	err = offs_threads_throttle(p->restricted);
	if (err)
		return err;
	s.ips_buf = p->ips;
	pin = offs_pin_capture(t, &s, clamp(READ_ONCE(offs_max_depth), 1U,
					    (unsigned int)OFFS_MAX_DEPTH_LIMIT));
	if (pin == OFFS_PIN_EXITING)
		return SEQ_SKIP;
	offs_sample_names(t, &s);
	seq_printf(m, "%5d %6d ", task_tgid_nr_ns(t, p->ns),
		   task_pid_nr_ns(t, p->ns));
	offs_seq_escaped(m, s.comm, TASK_COMM_LEN);
	seq_printf(m, "%*s", (int)(17 - min_t(size_t, strlen(s.comm), 16)),
		   "");
	offs_seq_escaped(m, s.tname, TASK_COMM_LEN);
	seq_printf(m, "%*s", (int)(17 - min_t(size_t, strlen(s.tname), 16)),
		   "");
	if (pin == OFFS_PIN_ONCPU || pin == OFFS_PIN_RACED) {
		seq_puts(m, "<running>\n");
		return 0;
	}
	for (i = 0; i < s.depth; i++) {
		offs_sym_format(s.ips[i], p->sym, sizeof(p->sym));
		plus = strchr(p->sym, '+');
		if (plus)
			*plus = '\0';
		seq_printf(m, "%s ", p->sym);
	}
	offs_frames_info(s.ips, s.depth, &info);
	seq_printf(m, "<%s:%c>\n", offs_reason_names[offs_reason_of(&s, &info)],
		   s.state_ch);
	return 0;
}

static const struct seq_operations offs_threads_sops = {
	.start = offs_threads_start,
	.next = offs_threads_next,
	.stop = offs_threads_stop,
	.show = offs_threads_show,
};

/*
 * Threads visible in the pid namespace of the /proc mount the file was
 * opened through, with their ids there (what /proc/<pid> shows in that
 * mount).
 */
static int offs_threads_open(struct inode *inode, struct file *file)
{
	struct offs_threads_priv *p;
	int acc = offs_open_access(file, OFFS_ACC_GROUP);

	if (acc < 0)
		return acc;
	p = __seq_open_private(file, &offs_threads_sops, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ns = offs_file_pid_ns(file);
	p->restricted = acc != OFFS_ACC_ADMIN;
	return 0;
}

static int offs_threads_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;
	struct offs_threads_priv *p = m->private;

	put_pid_ns(p->ns);
	return seq_release_private(inode, file);
}

const struct proc_ops offs_threads_fops = {
	.proc_open = offs_threads_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = offs_threads_release,
};

