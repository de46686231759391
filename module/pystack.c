// SPDX-License-Identifier: GPL-2.0
/*
 * pystack.c - CPython frames in user stacks (pystack.h).
 *
 * Three moments, each in its own context:
 *
 *   window (offs_pywin_enter(), sampler kthread, once per process per
 *     tick, again at each thread while a table of the process is being
 *     built; nothing pinned): is a CPython interpreter mapped (umm.c asks
 *     cficache.c, whose build found it with upy.c)?  Then the layout of
 *     its structures (3.13: its _Py_DebugOffsets) and the map of its
 *     threads, native thread id -> PyThreadState, sorted;
 *   pinned (offs_pystack_walk(), IRQs off or in the IPI of oncpu.c): the
 *     thread's frame chain is copied, a few non-faulting reads a frame;
 *   capture (offs_pystack_name() without a lock, then
 *     offs_pystack_merge() under offs_table_lock, ustack.c): each frame
 *     is named (qualified name, file, line: upy.c), the names interned,
 *     and the frames put in the place of the native
 *     _PyEval_EvalFrameDefault frames that run them, innermost first,
 *     as py-spy dump --native merges them.
 *
 * All of the process's memory is read with umm.c's non-faulting reads,
 * through upy.c, which bounds every loop and length: a process can forge
 * what is read, and get wrong names for its own frames, nothing more.
 *
 * Sampler kthread only (the pinned walk in the IPI runs while the sampler
 * waits for it): no locking of its own but offs_table_lock for names.
 */
#include <linux/sched.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sort.h>
#include <linux/jhash.h>
#include <linux/hash.h>
#include <linux/string.h>
#include <linux/futex.h>
#include <linux/syscalls.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "umm.h"
#include "ustack.h"
#include "pystack.h"
#include "pin.h"

/* ---- interned names (offs_table_lock held) ---- */

#define OFFS_PYBUCKETS		1024

static struct hlist_head offs_pyname_buckets[OFFS_PYBUCKETS];
static struct offs_istore offs_pynames = {
	.buckets = offs_pyname_buckets,
	.nbuckets = OFFS_PYBUCKETS,
};

static_assert(offsetof(struct offs_pyname, base) == 0);

static size_t offs_pyname_size(unsigned int qlen, unsigned int flen)
{
	return sizeof(struct offs_pyname) + qlen + flen + 2;
}

void offs_pyname_get(struct offs_pyname *p)
{
	offs_interned_get(&p->base);
}

void offs_pyname_put(struct offs_pyname *p)
{
	if (offs_interned_unref(&p->base))
		offs_istore_free(&offs_pynames, &p->base,
				 offs_pyname_size(p->qlen, p->flen));
}

unsigned int offs_pyname_count(void)
{
	return offs_istore_count(&offs_pynames);
}

u64 offs_pyname_bytes(void)
{
	return offs_istore_bytes(&offs_pynames);
}

/* What one name of the longest kind takes, as allocated. */
u64 offs_pyname_unit_cost(void)
{
	return offs_ksize(offs_pyname_size(OFFS_PY_NAME_MAX, OFFS_PY_FILE_MAX));
}

static u32 offs_pyname_hash(const char *q, unsigned int qlen,
			    const char *file, unsigned int flen)
{
	return jhash(q, qlen, jhash(file, flen, 0));
}

/*
 * The interned name with a reference, or NULL (past max_stacks, no
 * memory); hash is offs_pyname_hash()'s.
 */
static struct offs_pyname *offs_pyname_intern(const char *q, unsigned int qlen,
					      const char *file,
					      unsigned int flen, u32 hash)
{
	struct offs_pyname *p;

	hlist_for_each_entry(p, offs_istore_bucket(&offs_pynames, hash),
			     base.node) {
		if (p->base.hash == hash && p->qlen == qlen &&
		    p->flen == flen && !memcmp(p->s, q, qlen) &&
		    !memcmp(offs_pyname_file(p), file, flen)) {
			offs_interned_get(&p->base);
			return p;
		}
	}
	p = offs_istore_alloc(&offs_pynames, offs_pyname_size(qlen, flen));
	if (!p)
		return NULL;
	p->qlen = qlen;
	p->flen = flen;
	memcpy(p->s, q, qlen);
	p->s[qlen] = '\0';
	memcpy(p->s + qlen + 1, file, flen);
	p->s[qlen + 1 + flen] = '\0';
	offs_istore_add(&offs_pynames, &p->base, hash,
			offs_pyname_size(qlen, flen));
	return p;
}

/* ---- the window ---- */

/* Threads of one process looked up by id; more are not walked (counted). */
#define OFFS_PYWIN_THREADS	2048

struct offs_pythread {
	u32 tid;
	u64 ts;
};

/*
 * The window's interpreter.  Every write of entered, retry, unsure, cur or
 * mm is followed by offs_pywin_gate_set(): the gate (pystack.h) is what
 * captures ask.
 */
static struct {
	bool entered;			/* looked for in this window */
	/*
	 * Whether the process runs Python cannot be told yet (a table of
	 * its files is being built) or its threads could not be read: its
	 * captures in this window may lack their Python frames.
	 */
	bool unsure;
	bool retry;			/* look again at the next thread */
	bool over;			/* threads past OFFS_PYWIN_THREADS */
	struct mm_struct *cur;		/* the window's, interpreter or not */
	struct mm_struct *mm;		/* the window's; NULL: no interpreter */
	struct offs_py_layout l;
	u64 runtime;
	u64 code_type;
	u64 unicode_type;
	u64 eval_start;
	u64 eval_end;
	unsigned int nthreads;
	struct offs_pythread threads[OFFS_PYWIN_THREADS];
} offs_pywin;

static u64 offs_pywin_dbg[OFFS_PY_DEBUG_WORDS];

static const struct offs_py_mem offs_py_mem = { .read = offs_umm_read };

static bool offs_pywin_add(void *arg, u64 tid, u64 ts)
{
	if (offs_pywin.nthreads == OFFS_PYWIN_THREADS) {
		OFFS_STAT_ADD(py_threads_over, 1);
		offs_pywin.over = true;
		return true;
	}
	offs_pywin.threads[offs_pywin.nthreads].tid = tid;
	offs_pywin.threads[offs_pywin.nthreads].ts = ts;
	offs_pywin.nthreads++;
	return false;
}

static int offs_pythread_cmp(const void *a, const void *b)
{
	const struct offs_pythread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void offs_pymemo_reset(void);

/*
 * The window of mm was entered and its code mapped (offs_umm_map_code()):
 * look for an interpreter.  Reads the process's memory without faulting
 * (the sampler is in its address space); sleeps in sort() at most.
 * Called for each thread of the window: looks once, or again while a
 * table of the process is being built (an interpreter may show up in it
 * between two threads).
 */
static void offs_pywin_look(struct mm_struct *mm)
{
	struct offs_umm_pymemo *pm;
	const struct offs_py_syms *py;
	bool pending = false;
	u64 bias = 0;
	int err = 0;

	offs_pywin.entered = true;
	offs_pywin.unsure = false;
	offs_pywin.retry = false;
	offs_pywin.over = false;
	offs_pywin.cur = mm;
	offs_pywin.mm = NULL;
	offs_pywin.nthreads = 0;
	offs_pymemo_reset();
	if (!READ_ONCE(offs_python_stacks))
		return;
	/*
	 * The interpreter and its layout as found in the window's copy of
	 * the mappings when that copy was kept from an earlier tick: the
	 * same files at the same addresses, and debug offsets that are
	 * _PyRuntime's static data.  Its threads are read at each window.
	 */
	pm = offs_umm_pymemo();
	if (pm && pm->known) {
		py = pm->py;
		bias = pm->bias;
		if (py)
			offs_pywin.l = pm->l;
	} else {
		py = offs_umm_python(&bias, &pending);
	}
	if (!py) {
		if (pm && !pending)
			pm->known = true;	/* no interpreter */
		offs_pywin.unsure = pending;
		offs_pywin.retry = pending;
		return;
	}
	offs_pywin.runtime = py->runtime + bias;
	offs_pywin.code_type = py->code_type + bias;
	offs_pywin.unicode_type = py->unicode_type + bias;
	offs_pywin.eval_start = py->eval_start + bias;
	offs_pywin.eval_end = py->eval_end + bias;
	if (!pm || !pm->known) {
		err = offs_umm_read(NULL, offs_pywin.runtime, offs_pywin_dbg,
				    sizeof(offs_pywin_dbg));
		if (!err)
			err = offs_py_layout_init(&offs_pywin.l, py->version,
						  offs_pywin_dbg);
		/* Not while a table is pending: it may be the first one's. */
		if (!err && pm && !pending) {
			pm->py = py;
			pm->bias = bias;
			pm->l = offs_pywin.l;
			pm->known = true;
		}
	}
	if (!err)
		err = offs_py_threads(&offs_py_mem, &offs_pywin.l,
				      offs_pywin.runtime, offs_pywin_add, NULL);
	if (err) {
		OFFS_STAT_ADD(py_errors, 1);
		/*
		 * Memory not readable now may be next tick (not looked at
		 * again in this one: a read per thread); a layout this
		 * module does not know stays unknown.
		 */
		offs_pywin.unsure = err == -EFAULT;
		return;
	}
	sort(offs_pywin.threads, offs_pywin.nthreads,
	     sizeof(offs_pywin.threads[0]), offs_pythread_cmp, NULL);
	offs_pywin.mm = mm;
	OFFS_STAT_ADD(py_processes, 1);
}

/*
 * What a capture asks of the window before it calls in (pystack.h), set
 * wherever the answers change: here and when the window is left.
 */
struct offs_pywin_gate offs_pywin_gate = { .look = true };

static void offs_pywin_gate_set(void)
{
	offs_pywin_gate.look = !offs_pywin.entered || offs_pywin.retry;
	offs_pywin_gate.walk_mm = offs_pywin.unsure || offs_pywin.mm ?
				  offs_pywin.cur : NULL;
	offs_pywin_gate.gil_mm = offs_pywin.mm;
}

void offs_pywin_enter_look(struct mm_struct *mm)
{
	offs_pywin_look(mm);
	offs_pywin_gate_set();
}

void offs_pywin_leave(void)
{
	offs_pywin.entered = false;
	offs_pywin.unsure = false;
	offs_pywin.retry = false;
	offs_pywin.over = false;
	offs_pywin.cur = NULL;
	offs_pywin.mm = NULL;
	offs_pywin.nthreads = 0;
	offs_pywin_gate_set();
}

/* ---- pinned ---- */

static bool offs_pywin_find(u32 tid, u64 *ts)
{
	unsigned int lo = 0, hi = offs_pywin.nthreads, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (offs_pywin.threads[mid].tid == tid) {
			*ts = offs_pywin.threads[mid].ts;
			return true;
		}
		if (offs_pywin.threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool offs_pystack_is_eval(unsigned long ip)
{
	return ip >= offs_pywin.eval_start && ip < offs_pywin.eval_end;
}

/* Does s's native stack run Python code (an evaluation frame)? */
static bool offs_pystack_evaluates(const struct offs_sample *s)
{
	unsigned int i;

	for (i = 0; i < s->udepth; i++)
		if (offs_pystack_is_eval(s->uips[i]))
			return true;
	return false;
}

/*
 * Copy t's Python frames into s->pyf, t pinned or running here (the
 * IPI); s->umm is the address space loaded on this CPU (offs_user_walk()
 * checked it), its native stack walked.  The thread is found by its id in
 * its own pid namespace, which is what CPython's native_thread_id holds
 * (gettid()).  s->pylost: the stack may lack Python frames a later try
 * would read (ustack.c then marks the capture degraded: not cached,
 * threadcache.c): the window was unsure, the chain could not be read, or
 * the native stack evaluates Python code but the thread was not in its
 * interpreter's list (it started after the list was read; not when the
 * list was cut at its bound: those threads keep their native frames, and
 * are cached).
 */
void offs_pystack_walk_in(struct task_struct *t, struct offs_sample *s)
{
	int err;
	u64 ts;
	u32 tid;

	if (offs_pywin.unsure) {
		s->pylost = true;
		return;
	}
	if (s->umm != offs_pywin.mm)
		return;
	/* task_pid_nr_ns() takes rcu_read_lock(): fine here. */
	tid = task_pid_nr_ns(t, task_active_pid_ns(t));
	if (!tid || !offs_pywin_find(tid, &ts)) {
		s->pylost = !offs_pywin.over && offs_pystack_evaluates(s);
		return;
	}
	s->pyts = ts;
	s->pydepth = offs_py_walk(&offs_py_mem, &offs_pywin.l, ts, s->pyf,
				  offs_max_udepth(),
				  &s->pytruncated, &err);
	if (err) {
		s->pytruncated = true;
		s->pylost = true;
	}
}

/*
 * Is s, a Python thread blocked in futex(), waiting to take the GIL (the
 * futex word lies in its interpreter's _gil_runtime_state: take_gil()'s
 * condition variable or mutex)?  Then fx says so, for blocker.c to name
 * the holder (last_holder while locked).  Sampler, in s's window; reads
 * the process's memory without faulting.
 */
void offs_pystack_gil_wait_in(const struct offs_sample *s,
			      struct offs_fxwait *fx)
{
	unsigned long uaddr = s->args[0];
	struct offs_py_gil g;
	int cmd;

	if (s->syscall != __NR_futex)
		return;
	cmd = s->args[1] & FUTEX_CMD_MASK;
	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return;
	if (offs_py_gil(&offs_py_mem, &offs_pywin.l, offs_pywin.runtime,
			s->pyts, &g) ||
	    uaddr < g.addr || uaddr - g.addr >= OFFS_PY_GIL_SIZE)
		return;
	fx->cand = OFFS_FX_GIL;
	fx->uaddr = g.addr;
	fx->val = 0;
	fx->gil_holder = offs_pywin.l.gil_holder;
	fx->gil_locked = offs_pywin.l.gil_locked;
	fx->py_tid = offs_pywin.l.ts_native_tid;
	OFFS_STAT_ADD(py_gil_waits, 1);
}

/* ---- capture ---- */

/*
 * The names of the frames of one capture, read before offs_table_lock is
 * taken: strings in an arena, each frame pointing into it.
 */
#define OFFS_PY_ARENA		(32U << 10)

static struct offs_pynamed {
	u32 q;			/* offsets in the arena */
	u32 f;
	u16 qlen;
	u16 flen;
	u32 line;
	u32 hash;		/* offs_pyname_hash() */
	bool last;		/* the outermost frame of its evaluation */
	bool none;		/* an evaluation with no frame to show */
} offs_pynamed[OFFS_MAX_DEPTH_LIMIT];
static unsigned int offs_npynamed;
static char offs_py_arena[OFFS_PY_ARENA];
static struct offs_py_code offs_py_code_buf;

static bool offs_py_arena_put(const char *str, size_t n, u32 *at, u16 *len,
			      unsigned int *used)
{
	if (n > U16_MAX || *used + n > OFFS_PY_ARENA)
		return false;
	memcpy(offs_py_arena + *used, str, n);
	*at = *used;
	*len = n;
	*used += n;
	return true;
}

/*
 * The window's memo of named frames: (code object, instruction, owner) ->
 * name, file and line, so that threads of a process waiting at the same
 * place (a pool's workers) read and decode each code object once a tick,
 * not once a thread.  4-way sets; the strings in an arena of their own;
 * valid for one window (offs_pymemo_gen), where a code object cannot have
 * been freed and another put at its address running the same instruction
 * unless the program defines and drops functions while a tick passes
 * over it: then a frame may take the old one's name for that tick.
 * Sampler only (offs_pystack_name()).
 */
#define OFFS_PYMEMO_BITS	8
#define OFFS_PYMEMO_WAYS	4
#define OFFS_PYMEMO_ARENA	(32U << 10)

static struct offs_pymemo {
	u64 code;
	u64 instr;
	u32 gen;		/* valid when offs_pymemo_gen */
	u32 q;			/* offsets in offs_pymemo_arena */
	u32 f;
	u16 qlen;
	u16 flen;
	u32 line;
	u32 hash;		/* offs_pyname_hash() of the name and file */
	u8 owner;
	bool none;		/* offs_py_code() said -ENOENT */
	bool truncated;
} offs_pymemo[1U << OFFS_PYMEMO_BITS];
static char offs_pymemo_arena[OFFS_PYMEMO_ARENA];
static unsigned int offs_pymemo_used;
static u32 offs_pymemo_gen;

/* A new window: forget every entry. */
static void offs_pymemo_reset(void)
{
	offs_pymemo_used = 0;
	if (!++offs_pymemo_gen) {
		memset(offs_pymemo, 0, sizeof(offs_pymemo));
		offs_pymemo_gen = 1;
	}
}

static struct offs_pymemo *offs_pymemo_set(const struct offs_py_frame *f)
{
	u32 h = hash_64(f->code ^ (f->instr * 31) ^ f->owner,
			OFFS_PYMEMO_BITS);

	return &offs_pymemo[h & ~(OFFS_PYMEMO_WAYS - 1)];
}

static struct offs_pymemo *offs_pymemo_find(const struct offs_py_frame *f)
{
	struct offs_pymemo *e = offs_pymemo_set(f);
	unsigned int i;

	for (i = 0; i < OFFS_PYMEMO_WAYS; i++, e++)
		if (e->gen == offs_pymemo_gen && e->code == f->code &&
		    e->instr == f->instr && e->owner == f->owner)
			return e;
	return NULL;
}

/* Remember what offs_py_code() gave for f (0 or -ENOENT), if there is room. */
static void offs_pymemo_add(const struct offs_py_frame *f, int err,
			    const struct offs_py_code *c, size_t ql, size_t fl,
			    u32 hash)
{
	struct offs_pymemo *set = offs_pymemo_set(f), *e = set;
	unsigned int i;

	for (i = 0; i < OFFS_PYMEMO_WAYS; i++)
		if (set[i].gen != offs_pymemo_gen) {
			e = &set[i];
			break;
		}
	if (err) {
		ql = 0;
		fl = 0;
	}
	if (offs_pymemo_used + ql + fl > OFFS_PYMEMO_ARENA)
		return;
	e->gen = offs_pymemo_gen;
	e->code = f->code;
	e->instr = f->instr;
	e->owner = f->owner;
	e->none = err;
	e->truncated = !err && c->truncated;
	e->line = err ? 0 : c->line;
	e->hash = hash;
	e->q = offs_pymemo_used;
	e->qlen = ql;
	memcpy(offs_pymemo_arena + offs_pymemo_used, c->qualname, ql);
	offs_pymemo_used += ql;
	e->f = offs_pymemo_used;
	e->flen = fl;
	memcpy(offs_pymemo_arena + offs_pymemo_used, c->file, fl);
	offs_pymemo_used += fl;
}

/*
 * Name s's frames (no lock held; in the window).  A frame CPython would
 * not show is left out, its evaluation mark moved to the frame before it
 * in the same evaluation (or, if it was the only one, the evaluation
 * keeps its native frame).
 */
void offs_pystack_name(struct offs_sample *s)
{
	struct offs_py_code *c = &offs_py_code_buf;
	unsigned int i, used = 0, n = 0;
	bool group_open = false;
	int err;

	offs_npynamed = 0;
	for (i = 0; i < s->pydepth; i++) {
		struct offs_pynamed *p = &offs_pynamed[n];
		const struct offs_pymemo *e = offs_pymemo_find(&s->pyf[i]);
		const char *q, *file;
		size_t ql, fl;
		bool cut;
		u32 line, hash;

		if (e) {
			OFFS_STAT_ADD(py_code_memo_hits, 1);
			err = e->none ? -ENOENT : 0;
			q = offs_pymemo_arena + e->q;
			ql = e->qlen;
			file = offs_pymemo_arena + e->f;
			fl = e->flen;
			cut = e->truncated;
			line = e->line;
			hash = e->hash;
		} else {
			err = offs_py_code(&offs_py_mem, &offs_pywin.l,
					   offs_pywin.code_type,
					   offs_pywin.unicode_type,
					   &s->pyf[i], c);
			q = c->qualname;
			ql = strlen(q);
			file = c->file;
			fl = strlen(file);
			cut = c->truncated;
			line = c->line;
			hash = err ? 0 : offs_pyname_hash(q, ql, file, fl);
			if (!err || err == -ENOENT)
				offs_pymemo_add(&s->pyf[i], err, c, ql, fl, hash);
		}
		if (err == -ENOENT) {
			if (!s->pyf[i].last)
				continue;
			if (group_open) {
				offs_pynamed[n - 1].last = true;
			} else {
				memset(p, 0, sizeof(*p));
				p->last = true;
				p->none = true;
				n++;
			}
			group_open = false;
			continue;
		}
		if (err) {
			OFFS_STAT_ADD(py_errors, 1);
			s->degraded = true;
			break;
		}
		if (cut)
			OFFS_STAT_ADD(py_names_cut, 1);
		if (!offs_py_arena_put(q, ql, &p->q, &p->qlen, &used) ||
		    !offs_py_arena_put(file, fl, &p->f, &p->flen, &used)) {
			OFFS_STAT_ADD(py_names_dropped, 1);
			s->degraded = true;
			break;
		}
		p->line = line;
		p->hash = hash;
		p->last = s->pyf[i].last;
		p->none = false;
		group_open = !p->last;
		n++;
	}
	offs_npynamed = n;
}

static struct offs_uframe offs_pymerged[OFFS_MAX_DEPTH_LIMIT];

unsigned int offs_pystack_merge(struct offs_sample *s, struct offs_uframe *f,
				const unsigned long *ips, unsigned int n,
				unsigned int max, bool *truncated)
{
	unsigned int i, j = 0, out = 0, emitted = 0;
	struct offs_uframe *m = offs_pymerged;

	if (!offs_npynamed)
		return n;
	max = min_t(unsigned int, max, OFFS_MAX_DEPTH_LIMIT);
	for (i = 0; i <= n; i++) {
		/*
		 * At an evaluation frame, and after the last native frame
		 * for what is left (a native walk cut short), the Python
		 * frames of the next evaluation.
		 */
		bool eval = i < n && offs_pystack_is_eval(ips[i]) &&
			    j < offs_npynamed && !offs_pynamed[j].none;
		bool rest = i == n && j < offs_npynamed;

		if (i < n && !eval) {
			if (offs_pystack_is_eval(ips[i]) && j < offs_npynamed)
				j++;	/* an evaluation with nothing to show */
			if (out < max) {
				m[out++] = f[i];
			} else {
				offs_uframe_ref(&f[i], false);
				*truncated = true;
			}
			continue;
		}
		if (!eval && !rest)
			break;
		if (i < n)
			offs_uframe_ref(&f[i], false);
		while (j < offs_npynamed) {
			const struct offs_pynamed *p = &offs_pynamed[j++];
			struct offs_pyname *name;

			if (p->none)
				continue;
			if (out == max) {
				*truncated = true;
				if (p->last && !rest)
					break;
				continue;
			}
			name = offs_pyname_intern(offs_py_arena + p->q, p->qlen,
						  offs_py_arena + p->f, p->flen,
						  p->hash);
			if (!name) {
				OFFS_STAT_ADD(py_names_dropped, 1);
				s->degraded = true;
			} else {
				m[out].kind = OFFS_UF_PY;
				m[out].py = name;
				m[out].off = p->line;
				out++;
				emitted++;
			}
			if (p->last && !rest)
				break;
		}
	}
	OFFS_STAT_ADD(py_frames, emitted);
	memcpy(f, m, out * sizeof(*f));
	return out;
}
