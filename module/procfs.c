// SPDX-License-Identifier: GPL-2.0
/*
 * procfs.c - /proc/offsample: the only code that prints.
 *
 *   stacks   the current generation, one record per line (docs/FORMAT.md)
 *   drain    same format; opening it starts a new generation, atomically
 *   threads  every thread right now, FreeBSD "procstat -ka" columns
 *   stats    sampler health and cost, "name value" lines
 *   control  write "reset" to discard the current generation
 *
 * Access is decided at open, with the opener's credentials: reading needs
 * CAP_SYS_ADMIN in the initial user namespace, as /proc/PID/stack does
 * (root in a container or in a user namespace is not enough).  The group
 * parameter (at load time) lets one group read stacks, threads and stats
 * in a reduced view without user addresses (docs/SECURITY.md); draining
 * and control stay with CAP_SYS_ADMIN.  Kernel addresses are never
 * printed, only symbols.  Pids are those of the pid namespace of the /proc
 * mount the file was opened through, cgroup paths are relative to the
 * opener's cgroup namespace.  Large outputs stream through seq_file one
 * page at a time.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/idr.h>
#include <linux/sched/task.h>
#include <linux/utsname.h>
#include <linux/ktime.h>
#include <linux/string.h>
#include <linux/kallsyms.h>
#include <linux/hash.h>
#include <linux/cred.h>
#include <linux/uidgid.h>
#include <linux/kdev_t.h>
#include <linux/capability.h>
#include <linux/user_namespace.h>
#include <linux/cgroup.h>
#include <linux/nsproxy.h>
#include <linux/spinlock.h>
#include <linux/sched/signal.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "ustack.h"
#include "wobj.h"
#include "cficache.h"
#include "blocker.h"

#define OFFS_PROC_DIR	"offsample"

static struct proc_dir_entry *offs_proc_dir;
/* Set by the group parameter at load time, before the files exist. */
static kgid_t offs_read_gid = INVALID_GID;

enum offs_access {
	OFFS_ACC_NONE,
	OFFS_ACC_GROUP,		/* group= member: reduced view, read only */
	OFFS_ACC_ADMIN,		/* CAP_SYS_ADMIN in the initial user ns */
};

/*
 * Who opened file.  Called from ->open, which runs in the opener's context
 * with file->f_cred set to the opener's credentials, so the decision can
 * never be borrowed by handing the descriptor to someone else (the
 * opposite, handing an admin's descriptor on, is like handing on an open
 * /proc/PID/stack).  Readable files are 0440 root:GROUP (root:root
 * without group=), so the VFS has already required uid 0 or the group;
 * uid 0 alone is not enough here.  A group member is asked without audit:
 * lacking CAP_SYS_ADMIN denies it nothing.
 *
 * The group view is given only through a /proc of the initial pid
 * namespace.  Anyone with CAP_SETGID can join the group, among them root
 * in a container run with a typical capability set (Docker's includes
 * it); such a container has a pid namespace of its own, and its /proc
 * shows our files too.  It gets nothing, as it would without group=;
 * neither does a reader in another pid namespace that opens through the
 * host's /proc (bind-mounted into a container).
 */
static enum offs_access offs_access_of(struct file *file)
{
	kgid_t gid = READ_ONCE(offs_read_gid);

	if (gid_valid(gid) && in_group_p(gid)) {
		if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
			return OFFS_ACC_ADMIN;
		/* Nor a container that bind-mounts the host's /proc. */
		return proc_pid_ns(file_inode(file)->i_sb) == &init_pid_ns &&
		       task_active_pid_ns(current) == &init_pid_ns ?
		       OFFS_ACC_GROUP : OFFS_ACC_NONE;
	}
	if (file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN))
		return OFFS_ACC_ADMIN;
	return OFFS_ACC_NONE;
}

/* Open-time gate: returns the access, or -EACCES (counted). */
static int offs_open_access(struct file *file, enum offs_access need)
{
	enum offs_access acc = offs_access_of(file);

	if (acc < need) {
		atomic64_inc(&offs_stats.open_denied);
		return -EACCES;
	}
	return acc;
}

/* The pid namespace of the /proc mount a file was opened through. */
static struct pid_namespace *offs_file_pid_ns(struct file *file)
{
	return get_pid_ns(proc_pid_ns(file_inode(file)->i_sb));
}

/* The opener's cgroup namespace (called from ->open), with a reference. */
static struct cgroup_namespace *offs_current_cgroup_ns(void)
{
	struct cgroup_namespace *ns = current->nsproxy->cgroup_ns;

	get_cgroup_ns(ns);
	return ns;
}

/*
 * Load-time only (the parameter is read-only in sysfs): /proc copies an
 * entry's owner into its inode when the inode is created, so a later
 * change would not reach files already looked up.
 */
int offs_procfs_set_group(kgid_t gid)
{
	WRITE_ONCE(offs_read_gid, gid);
	return 0;
}

kgid_t offs_procfs_group(void)
{
	return READ_ONCE(offs_read_gid);
}

/* Bytes that would break a TAB-separated, ';'-joined line are escaped. */
static void offs_seq_escaped(struct seq_file *m, const char *s, size_t max)
{
	size_t i;
	unsigned char c;

	for (i = 0; i < max && s[i]; i++) {
		c = s[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || c == ';')
			seq_printf(m, "\\x%02x", c);
		else
			seq_putc(m, c);
	}
}

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
	seq_printf(m, "# source: %s\n", p->drain ? "drain" : "stacks");
	seq_printf(m, "# version: %s\n", OFFS_VERSION);
	seq_printf(m, "# kernel: %s\n", utsname()->release);
	seq_printf(m, "# hostname: %s\n", utsname()->nodename);
	seq_printf(m, "# generation: %llu\n", sum.seq);
	offs_seq_time(m, "start", sum.start_real_ns);
	offs_seq_time(m, "end", sum.end_real_ns);
	offs_seq_time(m, "duration", sum.duration_ns);
	seq_printf(m, "# hz: %u\n", READ_ONCE(offs_hz));
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
	offs_seq_key_fields(m, READ_ONCE(offs_key_fields));
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
	/* A user address: hidden from group= readers, as in wobj. */
	if (p->restricted)
		seq_puts(m, "\tobject=hidden");
	else
		seq_printf(m, "\tobject=0x%lx", k->uaddr);
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
		seq_printf(m, "\threc=%u\n", e->hrec_id);
	else
		seq_puts(m, "\threc=-\n");
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

static const struct proc_ops offs_stacks_fops = {
	.proc_open = offs_stacks_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = offs_stacks_release,
};

static const struct proc_ops offs_drain_fops = {
	.proc_open = offs_drain_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = offs_stacks_release,
};

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
	s.ips = p->ips;
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

static const struct proc_ops offs_threads_fops = {
	.proc_open = offs_threads_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = offs_threads_release,
};

/* ---- stats ---- */

static int offs_stats_open(struct inode *inode, struct file *file)
{
	int acc = offs_open_access(file, OFFS_ACC_GROUP);

	if (acc < 0)
		return acc;
	return single_open(file, offs_stats_show, NULL);
}

static const struct proc_ops offs_stats_fops = {
	.proc_open = offs_stats_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/* ---- control ---- */

static ssize_t offs_control_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	char buf[16];
	struct offs_gen *gen;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	if (strcmp(buf, "reset"))
		return -EINVAL;
	gen = offs_table_swap(false);
	if (IS_ERR(gen))
		return PTR_ERR(gen);
	atomic64_inc(&offs_stats.resets);
	return len;
}

/* CAP_SYS_ADMIN only (the mode, 0200 root, lets any uid 0 open). */
static int offs_control_open(struct inode *inode, struct file *file)
{
	if (offs_access_of(file) != OFFS_ACC_ADMIN) {
		atomic64_inc(&offs_stats.open_denied);
		return -EPERM;
	}
	return nonseekable_open(inode, file);
}

static const struct proc_ops offs_control_fops = {
	.proc_open = offs_control_open,
	.proc_write = offs_control_write,
};

/* ---- setup ---- */

int offs_procfs_init(void)
{
	/* group= readers may read these; drain and control are root's. */
	static const struct {
		const char *name;
		const struct proc_ops *fops;
	} files[] = {
		{ "stacks", &offs_stacks_fops },
		{ "threads", &offs_threads_fops },
		{ "stats", &offs_stats_fops },
	};
	struct proc_dir_entry *pde;
	unsigned int i;

	offs_proc_dir = proc_mkdir(OFFS_PROC_DIR, NULL);
	if (!offs_proc_dir)
		return -ENOMEM;
	if (!proc_create("control", 0200, offs_proc_dir, &offs_control_fops))
		goto err;
	if (!proc_create("drain", 0400, offs_proc_dir, &offs_drain_fops))
		goto err;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		pde = proc_create(files[i].name, 0440, offs_proc_dir,
				  files[i].fops);
		if (!pde)
			goto err;
		/* No inode exists yet: the owner applies to all of them. */
		if (gid_valid(offs_read_gid))
			proc_set_user(pde, GLOBAL_ROOT_UID, offs_read_gid);
	}
	return 0;
err:
	proc_remove(offs_proc_dir);
	return -ENOMEM;
}

/*
 * Waits for readers inside our file operations and runs ->release for
 * files still open, so nothing of ours runs after this returns.
 */
void offs_procfs_exit(void)
{
	proc_remove(offs_proc_dir);
}
