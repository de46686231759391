/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the only place in offsample that knows about kernel versions.
 *
 * Decisions are driven by Kbuild feature tests (see Kbuild: OFFS_HAVE_*
 * flags found by looking at the headers being built against) or by macros
 * the kernel headers define themselves.  LINUX_VERSION_CODE is never used:
 * distribution kernels backport APIs (Debian 6.1.192 carries 6.2 APIs, RHEL
 * 8 has the 5.14 task state rename) so version numbers lie.
 */
#ifndef OFFS_COMPAT_H
#define OFFS_COMPAT_H

#include <linux/sched.h>
#include <linux/proc_fs.h>

/* Task state word: "state" (volatile long) before 5.14, "__state" after. */
#ifdef OFFS_HAVE_TASK___STATE
#define offs_task_state(t)	READ_ONCE((t)->__state)
#else
#define offs_task_state(t)	((unsigned int)READ_ONCE((t)->state))
#endif

/*
 * EEVDF delayed dequeue (6.12): a task that blocked may stay on the run
 * queue with se.sched_delayed set until it is picked again.  Such a task is
 * blocked, not runnable (see task_is_runnable() in 6.12).
 */
#ifdef OFFS_HAVE_SCHED_DELAYED
#define offs_task_sched_delayed(t)	READ_ONCE((t)->se.sched_delayed)
#else
#define offs_task_sched_delayed(t)	((void)(t), 0)
#endif

/* State bits that did not exist on every supported kernel. */
#ifndef TASK_FROZEN
#define TASK_FROZEN		0
#endif
#ifndef TASK_RTLOCK_WAIT
#define TASK_RTLOCK_WAIT	0
#endif

/* Frozen tasks: a state bit since 6.1, a task flag before. */
#ifdef PF_FROZEN
#define offs_task_frozen(t, state)	(((state) & TASK_FROZEN) || \
					 (READ_ONCE((t)->flags) & PF_FROZEN))
#else
#define offs_task_frozen(t, state)	((void)(t), (state) & TASK_FROZEN)
#endif

/* proc_ops replaced file_operations for /proc entries in 5.6. */
#ifdef OFFS_HAVE_PROC_OPS
#define OFFS_PROC_OPS			const struct proc_ops
#define OFFS_PROC_OPEN(f)		.proc_open = (f)
#define OFFS_PROC_READ(f)		.proc_read = (f)
#define OFFS_PROC_WRITE(f)		.proc_write = (f)
#define OFFS_PROC_LSEEK(f)		.proc_lseek = (f)
#define OFFS_PROC_RELEASE(f)		.proc_release = (f)
#else
#define OFFS_PROC_OPS			const struct file_operations
#define OFFS_PROC_OPEN(f)		.open = (f)
#define OFFS_PROC_READ(f)		.read = (f)
#define OFFS_PROC_WRITE(f)		.write = (f)
#define OFFS_PROC_LSEEK(f)		.llseek = (f)
#define OFFS_PROC_RELEASE(f)		.release = (f)
#endif

/* PDE_DATA() became pde_data() in 5.17. */
#ifdef OFFS_HAVE_PDE_DATA_LOWER
#define offs_pde_data(inode)	pde_data(inode)
#else
#define offs_pde_data(inode)	PDE_DATA(inode)
#endif

#endif /* OFFS_COMPAT_H */
