/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umm.c: the sampler's window into a sampled process's address space, the
 * leaf of the user-stack layers (it calls nothing above it):
 *
 *   ustack.c   interned user stacks, the capture, the window's lifetime
 *     upath.c  files as the sampled process sees them (its root, paths)
 *     umm.c    address space: enter/leave, the unwinding walk, snapshot
 *       cficache.c, ucfi.c   compiled .eh_frame tables of mapped files
 */
#ifndef OFFS_UMM_H
#define OFFS_UMM_H

#include <linux/types.h>
#include <linux/mm_types.h>

#include "offsample.h"
#include "upy.h"

struct file;
struct mm_struct;

enum offs_uframe_kind {
	OFFS_UF_FILE,		/* path + file offset */
	OFFS_UF_ANON,		/* anonymous executable memory (JIT): address */
	OFFS_UF_HEAP,
	OFFS_UF_STACK,
	OFFS_UF_VDSO,		/* offset in the vDSO */
	OFFS_UF_UNMAPPED,	/* no mapping at the address: address */
	OFFS_UF_BUSY,		/* mmap lock busy, not translated: address */
	OFFS_UF_PY,		/* a CPython frame (pystack.c): name, line */
};

/* Kinds whose offset is a raw user address (hidden from group= readers). */
static inline bool offs_uframe_is_addr(unsigned long kind)
{
	return kind != OFFS_UF_FILE && kind != OFFS_UF_VDSO &&
	       kind != OFFS_UF_PY;
}

/*
 * One frame as seen under the mmap lock, before anything is interned:
 * a FILE frame holds a reference on the mapped file (get_file()), so the
 * file can be resolved after the lock is dropped.
 */
struct offs_uframe_raw {
	unsigned long addr;
	unsigned long off;
	unsigned long kind;
	struct file *file;
};

struct offs_py_syms;

/*
 * What pystack.c found in a copy of a process's mappings, kept with the
 * copy from tick to tick (offs_umm_pymemo()): the interpreter is looked for
 * and its layout read once per copy, not at every window of the process.
 */
struct offs_umm_pymemo {
	bool known;			/* filled in for this copy */
	const struct offs_py_syms *py;	/* NULL: no interpreter */
	u64 bias;
	struct offs_py_layout l;
};

/* Non-faulting read of the window's memory, whole words; any context. */
int offs_umm_read(void *ctx, u64 addr, void *buf, size_t len);

/* Sampler kthread only. */
struct mm_struct *offs_umm_use(struct task_struct *t);
void offs_umm_map_code_build(void);
void offs_umm_recopy(void);
bool offs_umm_maps_current(struct mm_struct *mm);	/* any context */
int offs_umm_verify(const struct offs_sample *s);
const struct offs_py_syms *offs_umm_python(u64 *bias, bool *pending);
struct offs_umm_pymemo *offs_umm_pymemo(void);

/*
 * What each capture asks of the window, inline (calls that returned at
 * once were about 60 instructions of a cold capture, issue 52): umm.c's
 * state, written by the sampler kthread.
 */
extern struct mm_struct *offs_umm_cur;
extern bool offs_umaps_built;
extern u64 offs_rmemo_gen;

/*
 * The address space entered last (offs_umm_use()), or NULL.  ustack.c's
 * window decides when to leave it: threads come grouped by process, so
 * consecutive threads share it.
 */
static inline struct mm_struct *offs_umm_current(void)
{
	return offs_umm_cur;
}

/*
 * Are we the last user of the current address space (the process exited
 * meanwhile)?  Then it should be left at once: holding it would keep its
 * memory, its mapped files and its executable's write lock until the end
 * of the tick.
 */
static inline bool offs_umm_orphaned(void)
{
	return offs_umm_cur && atomic_read(&offs_umm_cur->mm_users) <= 1;
}

/* The map of the current address space's code the unwinder needs, once. */
static inline void offs_umm_map_code(void)
{
	if (!offs_umaps_built)
		offs_umm_map_code_build();
}

/*
 * The generation of the window's copy of the mappings: the same for as
 * long as that copy, kept from tick to tick, is found right; a new one for
 * any other copy.  What was found from the copy's files and addresses
 * alone holds under it.
 */
static inline u64 offs_umm_gen(void)
{
	return offs_rmemo_gen;
}

bool offs_umm_gen_kept(u64 gen);
bool offs_umm_gen_current_kept(void);
u64 offs_umm_kept_dropped(void);
void offs_umm_leave(void);
void offs_umm_tick_end(bool all);
unsigned int offs_umm_walk(const struct offs_sample *s, unsigned long *ips,
			   unsigned int max, bool *truncated,
			   unsigned long *fault_addr, bool *pending);
int offs_umm_snapshot(struct mm_struct *mm, const unsigned long *ips,
		      unsigned int n, unsigned long fault_addr,
		      struct offs_uframe_raw *raw, bool *faulted, bool *in_maps);
void offs_umm_release(struct offs_uframe_raw *raw, unsigned int n);

#endif /* OFFS_UMM_H */
