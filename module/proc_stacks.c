// SPDX-License-Identifier: GPL-2.0
/*
 * proc_stacks.c - /proc/offsample/stacks and drain: a generation of the
 * table, one record per line (docs/FORMAT.md), after a header that
 * describes it and the mapped files its user frames point into.
 *
 * Opening stacks takes a reference on the current generation; opening
 * drain swaps in an empty one and hands the reader the old one, now
 * immutable.  Records print through seq_file one page at a time, kernel
 * frames as symbols (symcache.c), user frames as (path, offset).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task.h>
#include <linux/utsname.h>
#include <linux/ktime.h>
#include <linux/string.h>
#include <linux/kallsyms.h>
#include <linux/hash.h>
#include <linux/kdev_t.h>
#include <linux/cgroup.h>
#include <linux/uaccess.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "session.h"
#include "blocker.h"
#include "ustack.h"
#include "wobj.h"
#include "cgroup.h"
#include "procfs.h"
#include "symcache.h"
#include "pystack.h"

static void offs_seq_time(struct seq_file *m, const char *name, u64 ns)
{
	seq_printf(m, "# %s: %llu.%03llu\n", name, ns / NSEC_PER_SEC,
		   (ns % NSEC_PER_SEC) / NSEC_PER_MSEC);
}

static void offs_seq_key_fields(struct seq_file *m, unsigned int fields)
{
	seq_puts(m, "comm");
	if (fields & OFFS_KEY_PID)
		seq_puts(m, ",pid");
	if (fields & OFFS_KEY_TID)
		seq_puts(m, ",tid");
	if (fields & OFFS_KEY_TNAME)
		seq_puts(m, ",tname");
	if (fields & OFFS_KEY_WOBJ)
		seq_puts(m, ",wobj");
}

/* Bytes that would break the line format in a path are escaped too. */
static void offs_seq_path(struct seq_file *m, const char *s, size_t len)
{
	offs_seq_escaped(m, s, len);
}

/* "# file:" line: the identity of a mapped file as it was when sampled. */
static void offs_seq_file_line(struct seq_file *m, const struct offs_upath *p)
{
	seq_printf(m, "# file: dev=%u:%u ino=%llu size=%lld mtime=%lld.%09ld path=",
		   MAJOR(p->dev), MINOR(p->dev), p->ino, (long long)p->size,
		   (long long)p->mtime.tv_sec, p->mtime.tv_nsec);
	offs_seq_path(m, p->path, p->len);
	seq_putc(m, '\n');
}

/*
 * restricted: a group= reader, who sees no raw user address (a frame that
 * is not in a file prints as its kind alone, e.g. "[anon]").
 */
static void offs_seq_ustack(struct seq_file *m, const struct offs_ustack *us,
			    bool restricted)
{
	static const char * const kinds[] = {
		[OFFS_UF_ANON] = "[anon]", [OFFS_UF_HEAP] = "[heap]",
		[OFFS_UF_STACK] = "[stack]", [OFFS_UF_VDSO] = "[vdso]",
		[OFFS_UF_UNMAPPED] = "[unmapped]", [OFFS_UF_BUSY] = "[busy]",
	};
	const struct offs_uframe *f;
	unsigned int i;

	if (!us) {
		seq_putc(m, '-');
		return;
	}
	for (i = 0; i < us->depth; i++) {
		f = &us->frames[i];
		if (i)
			seq_putc(m, ';');
		if (f->kind == OFFS_UF_PY) {
			/* "[py]QUALNAME (FILE:LINE)", escaped like paths. */
			seq_puts(m, "[py]");
			offs_seq_path(m, f->py->s, f->py->qlen);
			seq_puts(m, " (");
			offs_seq_path(m, offs_pyname_file(f->py), f->py->flen);
			seq_printf(m, ":%lu)", f->off);
			continue;
		}
		if (f->kind == OFFS_UF_FILE)
			offs_seq_path(m, f->path->path, f->path->len);
		else
			seq_puts(m, kinds[f->kind]);
		if (!restricted || !offs_uframe_is_addr(f->kind))
			seq_printf(m, "+0x%lx", f->off);
	}
	if (us->raced)
		seq_puts(m, ";[raced]");
	if (us->truncated)
		seq_puts(m, ";[truncated]");
}

/* ---- stacks and drain ---- */

/* A set of pointers: which mapped files the header has described. */
struct offs_ptrset {
	const void **slots;
	unsigned int size;	/* power of two, or 0 */
	unsigned int used;
};

static bool offs_ptrset_grow(struct offs_ptrset *set)
{
	unsigned int n = set->size ? set->size * 2 : 64, i, j;
	const void **slots;

	/* Charged to the reader (its memory cgroup). */
	slots = kvcalloc(n, sizeof(*slots), GFP_KERNEL_ACCOUNT);
	if (!slots)
		return false;
	for (i = 0; i < set->size; i++) {
		if (!set->slots[i])
			continue;
		for (j = hash_ptr(set->slots[i], 32) & (n - 1); slots[j];
		     j = (j + 1) & (n - 1))
			;
		slots[j] = set->slots[i];
	}
	kvfree(set->slots);
	set->slots = slots;
	set->size = n;
	return true;
}

/* True if p was not in the set (it is now). */
static bool offs_ptrset_add(struct offs_ptrset *set, const void *p)
{
	unsigned int i, mask;

	if (set->used * 2 >= set->size && !offs_ptrset_grow(set))
		return true;	/* out of memory: better twice than never */
	mask = set->size - 1;
	for (i = hash_ptr(p, 32) & mask; set->slots[i]; i = (i + 1) & mask)
		if (set->slots[i] == p)
			return false;
	set->slots[i] = p;
	set->used++;
	return true;
}

struct offs_stacks_priv {
	struct offs_gen_iter it;
	loff_t edges_at;		/* position of the first edge, 0: unknown */
	struct offs_edge_out edge;	/* the edge being shown */
	bool drain;
	struct offs_session *se;	/* the session file's, or NULL */
	struct mutex rw_lock;		/* its reads and writes, one at a time */
	bool restricted;		/* group= reader: no user addresses */
	struct pid_namespace *pidns;	/* pids as seen from here */
	struct cgroup_namespace *cgns;	/* cgroup paths relative to here */
	struct offs_ptrset files;
	struct seq_file *m;		/* for offs_header_files() */
	u64 cg_id;			/* the last cgroup path printed */
	int cg_len;
	char cg_path[256];
	char sym[KSYM_SYMBOL_LEN];
};

/*
 * Position 0 is the header, then come the records, then the edges.  The
 * edges start where this reader first found no more records: records added
 * to a live generation after that are not shown (the next read has them),
 * so positions stay stable across read() calls.
 */
static void *offs_stacks_seek(struct offs_stacks_priv *p, loff_t pos)
{
	if (pos == 0) {
		/* A new pass (the first read, a rewind): records first. */
		p->edges_at = 0;
		return SEQ_START_TOKEN;
	}
	if (!p->edges_at || pos < p->edges_at) {
		if (offs_gen_iter_seek(&p->it, pos - 1))
			return &p->it;
		if (!p->edges_at)
			p->edges_at = pos;
	}
	if (pos < p->edges_at)
		return NULL;
	return offs_gen_edge_seek(&p->it, pos - p->edges_at, &p->edge) ?
	       &p->edge : NULL;
}

static void *offs_stacks_start(struct seq_file *m, loff_t *pos)
{
	return offs_stacks_seek(m->private, *pos);
}

static void *offs_stacks_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return offs_stacks_seek(m->private, *pos);
}

static void offs_stacks_stop(struct seq_file *m, void *v)
{
}

/* offs_table_lock held: describe the files rec's user stack points into. */
static void offs_header_files(struct offs_rec *rec, void *arg)
{
	struct offs_stacks_priv *p = arg;
	const struct offs_upath *up;
	unsigned int i;

	for (i = 0; rec->ustack && i < rec->ustack->depth; i++) {
		if (rec->ustack->frames[i].kind != OFFS_UF_FILE)
			continue;
		up = rec->ustack->frames[i].path;
		if (up && offs_ptrset_add(&p->files, up))
			offs_seq_file_line(p->m, up);
	}
}

/* A thread id of the initial namespace as the reader's sees it, or 0. */
static pid_t offs_pid_in(pid_t nr, struct pid_namespace *ns)
{
	struct pid *pid;

	if (!nr || ns == &init_pid_ns)
		return nr;
	/* find_pid_ns() and pid_nr_ns() need RCU. */
	rcu_read_lock();
	pid = find_pid_ns(nr, &init_pid_ns);
	nr = pid ? pid_nr_ns(pid, ns) : 0;
	rcu_read_unlock();
	return nr;
}

/*
 * A process or thread id (0: not part of the key) as seen from ns, or
 * "-" when it is not visible there or has gone (records keep the ids of
 * the initial namespace).
 */
static void offs_seq_pid(struct seq_file *m, pid_t nr, struct pid_namespace *ns)
{
	nr = offs_pid_in(nr, ns);
	if (nr)
		seq_printf(m, "%d\t", nr);
	else
		seq_puts(m, "-\t");
}

/*
 * A wait object; a group= reader sees "futex(hidden)", not the address;
 * a process id (wait4) is shown as the reader's pid namespace sees it.
 */
static void offs_seq_wobj(struct seq_file *m, const struct offs_wobj *w,
			  const struct offs_stacks_priv *p)
{
	const struct offs_wobj_addr *a = &w->addr;
	int nr;

	if (!a->len || (!a->pid && !p->restricted) ||
	    (a->pid && p->pidns == &init_pid_ns)) {
		offs_seq_escaped(m, w->str, w->len);
		return;
	}
	offs_seq_escaped(m, w->str, a->at);
	nr = a->pid ? offs_pid_in(a->pid, p->pidns) : 0;
	if (!a->pid)
		seq_puts(m, "hidden");
	else if (nr > 0)
		seq_printf(m, "%d", nr);
	else
		seq_putc(m, '-');
	offs_seq_escaped(m, w->str + a->at + a->len, w->len - a->at - a->len);
}

static void offs_stacks_header(struct seq_file *m, struct offs_stacks_priv *p)
{
	struct offs_gen_summary sum;
	int r;

	offs_gen_summary(p->it.gen, &sum);
	seq_printf(m, "# offsample stacks v%d\n", OFFS_FORMAT_VERSION);
	seq_printf(m, "# source: %s\n", p->se ? "session" :
					  p->drain ? "drain" : "stacks");
	seq_printf(m, "# version: %s\n", OFFS_VERSION);
	seq_printf(m, "# kernel: %s\n", utsname()->release);
	seq_printf(m, "# hostname: %s\n", utsname()->nodename);
	seq_printf(m, "# generation: %llu\n", sum.seq);
	offs_seq_time(m, "start", sum.start_real_ns);
	offs_seq_time(m, "end", sum.end_real_ns);
	offs_seq_time(m, "duration", sum.duration_ns);
	/* A session's window: its own rate and key (session.c). */
	seq_printf(m, "# hz: %u\n", p->it.gen->session ? p->it.gen->hz :
						    READ_ONCE(offs_hz));
	seq_printf(m, "# ticks: %llu\n", sum.ticks);
	seq_printf(m, "# samples: %llu\n", sum.samples);
	seq_printf(m, "# dropped: %llu\n", sum.dropped);
	if (sum.dropped) {
		seq_puts(m, "# dropped_by_reason:");
		for (r = 0; r < OFFS_R_NR; r++)
			if (sum.dropped_reason[r])
				seq_printf(m, " %s=%llu", offs_reason_names[r],
					   sum.dropped_reason[r]);
		seq_putc(m, '\n');
	}
	seq_printf(m, "# records: %u\n", sum.nrecs);
	seq_printf(m, "# blockers: %u\n", sum.nedges);
	seq_puts(m, "# key: ");
	offs_seq_key_fields(m, p->it.gen->session ? p->it.gen->key_fields :
						    READ_ONCE(offs_key_fields));
	seq_putc(m, '\n');
	seq_printf(m, "# view: %s\n", p->restricted ? "group" : "full");
	seq_puts(m, "# columns: count reason state pid tid comm tname kstack ustack wobj cgroup critical\n");
	/* The same set each time the header is printed (seq_file retries). */
	p->files.used = 0;
	if (p->files.size)
		memset(p->files.slots, 0, p->files.size * sizeof(*p->files.slots));
	p->m = m;
	offs_gen_each_rec(p->it.gen, offs_header_files, p);
}

static void offs_seq_kv_pid(struct seq_file *m, const char *name, pid_t nr)
{
	if (nr)
		seq_printf(m, "\t%s=%d", name, nr);
	else
		seq_printf(m, "\t%s=-", name);
}

static void offs_seq_kv_name(struct seq_file *m, const char *name,
			     const char *s)
{
	seq_printf(m, "\t%s=", name);
	if (s[0])
		offs_seq_escaped(m, s, TASK_COMM_LEN);
	else
		seq_putc(m, '-');
}

/* What an edge's waiter waits on: object= (docs/FORMAT.md). */
static void offs_stacks_show_object(struct seq_file *m,
				    const struct offs_edge_key *k,
				    bool restricted)
{
	static const char * const wait[] = {
		[OFFS_WAIT_PID] = "pid", [OFFS_WAIT_PGID] = "pgid",
		[OFFS_WAIT_ANY] = "any",
	};
	static const char * const kobj[] = {
		[OFFS_KO_MMAP_LOCK] = "mmap_lock", [OFFS_KO_F_POS] = "f_pos_lock",
		[OFFS_KO_I_RWSEM] = "i_rwsem", [OFFS_KO_PIPE] = "pipe_mutex",
		[OFFS_KO_UNIX_IO] = "unix_iolock",
	};
	unsigned long ko;

	switch (k->kind) {
	case OFFS_BK_CHILD:
		seq_printf(m, "\tobject=%s", k->uaddr < ARRAY_SIZE(wait) ?
			   wait[k->uaddr] : "-");
		return;
	case OFFS_BK_CPU:
		seq_printf(m, "\tobject=cpu%lu", k->uaddr);
		return;
	case OFFS_BK_UNIX:
	case OFFS_BK_FLOCK:
	case OFFS_BK_POSIX:
	case OFFS_BK_OFD:
	case OFFS_BK_PIPE:
	case OFFS_BK_FIFO:
	case OFFS_BK_TCP:
	case OFFS_BK_UDP:
		seq_printf(m, "\tobject=fd%lu", k->uaddr);
		return;
	case OFFS_BK_RWSEM:
	case OFFS_BK_RTMUTEX:
	case OFFS_BK_KMUTEX:
	case OFFS_BK_KLOCK:
		/* A kernel lock: named, never its address. */
		ko = OFFS_KO_OF(k->uaddr);
		if (ko >= ARRAY_SIZE(kobj) || !kobj[ko])
			seq_puts(m, "\tobject=-");
		else if (ko == OFFS_KO_MMAP_LOCK)
			seq_printf(m, "\tobject=%s", kobj[ko]);
		else	/* a file's lock: the waiter's descriptor too */
			seq_printf(m, "\tobject=%s:fd%lu", kobj[ko],
				   OFFS_KO_FD(k->uaddr));
		return;
	}
	/* A user address: hidden from group= readers, as in wobj. */
	if (restricted)
		seq_puts(m, "\tobject=hidden");
	else
		seq_printf(m, "\tobject=0x%lx", k->uaddr);
}

/*
 * One waiter -> holder edge (docs/FORMAT.md, "# blocker:" lines): TAB
 * separated name=value fields; records are named by their id, the
 * position of their line among the records.
 */
static void offs_stacks_show_edge(struct seq_file *m,
				  struct offs_stacks_priv *p)
{
	const struct offs_edge_out *e = &p->edge;
	const struct offs_edge_key *k = &e->key;

	seq_printf(m, "# blocker: samples=%llu\tkind=%s", e->count,
		   offs_blk_kind_names[k->kind]);
	offs_stacks_show_object(m, k, p->restricted);
	offs_seq_kv_pid(m, "waiter", offs_pid_in(k->wtid, p->pidns));
	offs_seq_kv_pid(m, "wpid", offs_pid_in(k->wtgid, p->pidns));
	offs_seq_kv_name(m, "wname", k->wname);
	seq_printf(m, "\twrec=%u", e->wrec_id);
	if (k->hstate == OFFS_BH_GONE && p->restricted) {
		/*
		 * Memory of the waiter's, not a thread: a group= reader
		 * sees no raw word of another process (what looked like a
		 * lock's owner may be the low half of a pointer).
		 */
		seq_puts(m, "\tholder=-\thpid=-");
	} else if (k->hstate == OFFS_BH_UNKNOWN) {
		seq_puts(m, "\tholder=?\thpid=?");
	} else if (k->hstate == OFFS_BH_GONE) {
		/* No thread to translate: the id the lock word holds. */
		seq_printf(m, "\tholder=%d\thpid=-", k->htid);
	} else {
		offs_seq_kv_pid(m, "holder", offs_pid_in(k->htid, p->pidns));
		offs_seq_kv_pid(m, "hpid", offs_pid_in(k->htgid, p->pidns));
	}
	offs_seq_kv_name(m, "hcomm", k->hcomm);
	offs_seq_kv_name(m, "hname", k->hname);
	seq_printf(m, "\thstate=%s", offs_blk_hstate_names[k->hstate]);
	if (e->hrec_id)
		seq_printf(m, "\threc=%u", e->hrec_id);
	else
		seq_puts(m, "\threc=-");
	/* (v5) Why nobody is named. */
	if (k->hstate == OFFS_BH_UNKNOWN && k->why < OFFS_BW_NR)
		seq_printf(m, "\twhy=%s", offs_blk_why_names[k->why]);
	seq_putc(m, '\n');
}

static int offs_stacks_show(struct seq_file *m, void *v)
{
	struct offs_stacks_priv *p = m->private;
	struct offs_rec *rec;
	struct offs_stack *st;
	unsigned int i;
	u64 crit;

	if (v == SEQ_START_TOKEN) {
		offs_stacks_header(m, p);
		return 0;
	}
	if (v == &p->edge) {
		offs_stacks_show_edge(m, p);
		return 0;
	}
	/* rec and its stacks are immutable and kept alive by our gen ref. */
	rec = p->it.rec;
	st = rec->stack;

	seq_printf(m, "%llu\t%s\t%c\t", p->it.count,
		   offs_reason_names[rec->reason], rec->state_ch);
	offs_seq_pid(m, rec->tgid, p->pidns);
	offs_seq_pid(m, rec->tid, p->pidns);
	offs_seq_escaped(m, rec->comm, TASK_COMM_LEN);
	seq_putc(m, '\t');
	if (rec->tname[0])
		offs_seq_escaped(m, rec->tname, TASK_COMM_LEN);
	else
		seq_putc(m, '-');
	seq_putc(m, '\t');
	for (i = 0; i < st->depth; i++) {
		if (i)
			seq_putc(m, ';');
		if (!i && st->pc_leaf)
			offs_sym_format_pc(st->ips[i], p->sym, sizeof(p->sym));
		else
			offs_sym_format(st->ips[i], p->sym, sizeof(p->sym));
		seq_puts(m, p->sym);
	}
	/* A thread running user code when sampled has no kernel frame. */
	if (!st->depth)
		seq_puts(m, rec->reason == OFFS_R_CPU ? "-" : "[unknown]");
	if (st->truncated)
		seq_puts(m, ";[truncated]");
	seq_putc(m, '\t');
	offs_seq_ustack(m, rec->ustack, p->restricted);
	seq_putc(m, '\t');
	if (rec->wobj)
		offs_seq_wobj(m, rec->wobj, p);
	else if (offs_syscall_name(rec->syscall))
		seq_puts(m, offs_syscall_name(rec->syscall));
	else
		seq_putc(m, '-');
	seq_putc(m, '\t');
	/* Records of one cgroup tend to come together: one lookup each. */
	if (!p->cg_len || p->cg_id != rec->cgid) {
		p->cg_len = offs_cgroup_path(rec->cgid, p->cgns, p->cg_path,
					     sizeof(p->cg_path));
		p->cg_id = rec->cgid;
	}
	offs_seq_escaped(m, p->cg_path, sizeof(p->cg_path));
	/* v3: GAPP weight, thousandths (the sampler adds at tick end). */
	crit = div_u64(READ_ONCE(rec->crit_micro) + 500, 1000);
	seq_printf(m, "\t%llu.%03llu\n", div_u64(crit, 1000),
		   crit - div_u64(crit, 1000) * 1000);
	return 0;
}

static const struct seq_operations offs_stacks_sops = {
	.start = offs_stacks_start,
	.next = offs_stacks_next,
	.stop = offs_stacks_stop,
	.show = offs_stacks_show,
};

static void offs_stacks_free_ns(struct offs_stacks_priv *p)
{
	put_pid_ns(p->pidns);
	put_cgroup_ns(p->cgns);
}

static struct offs_stacks_priv *
offs_stacks_open_priv(struct file *file, enum offs_access acc)
{
	struct offs_stacks_priv *p;

	p = __seq_open_private(file, &offs_stacks_sops, sizeof(*p));
	if (!p)
		return NULL;
	p->restricted = acc != OFFS_ACC_ADMIN;
	p->pidns = offs_file_pid_ns(file);
	p->cgns = offs_current_cgroup_ns();
	return p;
}

/*
 * Open stacks or drain.  Opening drain is the drain: the reader owns the
 * generation it swapped out.  Drain is CAP_SYS_ADMIN only: it takes the
 * samples away from everyone else (a cron job collecting them, for one).
 * group= readers of stacks have their own bound on the old generations
 * they keep alive (offs_table_get_current_group()).
 */
static int offs_stacks_open_gen(struct inode *inode, struct file *file,
				bool drain)
{
	struct offs_stacks_priv *p;
	struct offs_gen *gen;
	int acc = offs_open_access(file, drain ? OFFS_ACC_ADMIN :
						 OFFS_ACC_GROUP);

	if (acc < 0)
		return acc;
	p = offs_stacks_open_priv(file, acc);
	if (!p)
		return -ENOMEM;
	if (drain)
		gen = offs_table_swap(true);
	else if (p->restricted)
		gen = offs_table_get_current_group();
	else
		gen = offs_table_get_current();
	if (IS_ERR(gen)) {
		offs_stacks_free_ns(p);
		seq_release_private(inode, file);
		return PTR_ERR(gen);
	}
	if (drain)
		atomic64_inc(&offs_stats.drains);
	p->it.gen = gen;
	p->drain = drain;
	return 0;
}

static int offs_stacks_open(struct inode *inode, struct file *file)
{
	return offs_stacks_open_gen(inode, file, false);
}

static int offs_drain_open(struct inode *inode, struct file *file)
{
	return offs_stacks_open_gen(inode, file, true);
}

static int offs_stacks_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;
	struct offs_stacks_priv *p = m->private;

	if (p->restricted && !p->drain)
		offs_table_put_group(p->it.gen);
	else
		offs_gen_put(p->it.gen);
	kvfree(p->files.slots);
	offs_stacks_free_ns(p);
	return seq_release_private(inode, file);
}

const struct proc_ops offs_stacks_fops = {
	.proc_open = offs_stacks_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = offs_stacks_release,
};

const struct proc_ops offs_drain_fops = {
	.proc_open = offs_drain_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = offs_stacks_release,
};

/* ---- session: a consumer of its own (session.c) ---- */

/*
 * Opening the file starts a session (at the module's rate and key, until
 * settings are written); it ends when the file is closed.  Readers of the
 * group= view may have one too: it counts only for itself, so it takes
 * nothing from anyone, and it prints the group view.
 */
static int offs_session_open(struct inode *inode, struct file *file)
{
	struct offs_stacks_priv *p;
	struct offs_session *se;
	int acc = offs_open_access(file, OFFS_ACC_GROUP);

	if (acc < 0)
		return acc;
	p = offs_stacks_open_priv(file, acc);
	if (!p)
		return -ENOMEM;
	se = offs_sess_open(acc != OFFS_ACC_ADMIN);
	if (IS_ERR(se)) {
		offs_stacks_free_ns(p);
		seq_release_private(inode, file);
		return PTR_ERR(se);
	}
	p->se = se;
	mutex_init(&p->rw_lock);
	return 0;
}

/*
 * A read from offset 0 takes the window counted so far (the next one
 * starts in the same step, between two ticks) and prints it; the rest of
 * the file is that window.  p->rw_lock: one read (swap and print) or
 * write of this file at a time, so that a window is never replaced while
 * another read of the same file prints it.  Sleeps.
 */
static ssize_t offs_session_read(struct file *file, char __user *buf,
				 size_t size, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct offs_stacks_priv *p = m->private;
	struct offs_gen *gen, *old = NULL;
	ssize_t n;

	if (mutex_lock_killable(&p->rw_lock))
		return -EINTR;
	if (*ppos == 0) {
		/* Allocates and waits for a tick in progress. */
		gen = offs_sess_window(p->se);
		if (IS_ERR(gen)) {
			mutex_unlock(&p->rw_lock);
			return PTR_ERR(gen);
		}
		/* The seq_file's own lock: its iterator is p->it. */
		mutex_lock(&m->lock);
		old = p->it.gen;
		p->it = (struct offs_gen_iter){ .gen = gen };
		p->edges_at = 0;
		mutex_unlock(&m->lock);
		offs_gen_put(old);
	} else if (!p->it.gen) {
		mutex_unlock(&p->rw_lock);
		return 0;	/* nothing read yet: nothing to continue */
	}
	n = seq_read(file, buf, size, ppos);
	mutex_unlock(&p->rw_lock);
	return n;
}

/*
 * Moving in a window; before the first one there is nothing to move in
 * (seq_lseek() would print a header without a window).
 */
static loff_t offs_session_lseek(struct file *file, loff_t off, int whence)
{
	struct seq_file *m = file->private_data;
	struct offs_stacks_priv *p = m->private;
	loff_t r;

	if (mutex_lock_killable(&p->rw_lock))
		return -EINTR;
	if (p->it.gen)
		r = seq_lseek(file, off, whence);
	else if (whence == SEEK_SET && off == 0)
		r = 0;
	else
		r = -EINVAL;
	mutex_unlock(&p->rw_lock);
	return r;
}

/* Settings (offs_sess_configure()): "hz=99 key=comm,pid cgroup=/x pid=7". */
static ssize_t offs_session_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct offs_stacks_priv *p = m->private;
	char buf[512];
	int err;

	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (mutex_lock_killable(&p->rw_lock))
		return -EINTR;
	err = offs_sess_configure(p->se, buf, p->pidns, p->restricted);
	mutex_unlock(&p->rw_lock);
	return err ? err : count;
}

static int offs_session_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;
	struct offs_stacks_priv *p = m->private;

	offs_sess_close(p->se);
	offs_gen_put(p->it.gen);
	kvfree(p->files.slots);
	offs_stacks_free_ns(p);
	return seq_release_private(inode, file);
}

const struct proc_ops offs_session_fops = {
	.proc_open = offs_session_open,
	.proc_read = offs_session_read,
	.proc_write = offs_session_write,
	.proc_lseek = offs_session_lseek,
	.proc_release = offs_session_release,
};
