// SPDX-License-Identifier: GPL-2.0
/*
 * classify.c - why is a thread waiting?
 *
 * Signals, strongest first (docs/CLASSIFICATION.md has the full rules):
 *   1. task state: stopped/traced/frozen, runnable (run-queue wait),
 *      TASK_IDLE/parked kernel threads, PREEMPT_RT spinlock wait;
 *   2. in_iowait (set by io_schedule());
 *   3. how a user thread entered the kernel: a page fault (orig_ax == -1
 *      and a fault frame) or a system call whose purpose is to wait
 *      (futex, nanosleep, epoll_wait, wait4 ...);
 *   4. kernel frame names, scanned from the leaf: the first decisive name
 *      wins, else the first weak one;
 *   5. kernel threads with nothing decisive are idle; the rest is "other".
 *
 * Frame names are resolved once per unique return address (%ps of
 * addr - 1, compiler suffixes such as .constprop.0 stripped) and the
 * result is kept in a small address -> class cache.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mutex.h>
#include <linux/hash.h>
#include <linux/sort.h>
#include <linux/bsearch.h>
#include <linux/string.h>
#include <linux/kallsyms.h>
#include <asm/unistd.h>

#include "offsample.h"
#include "stats.h"
#include "classify.h"

const char * const offs_reason_names[OFFS_R_NR] = {
	[OFFS_R_IO] = "io",
	[OFFS_R_LOCK] = "lock",
	[OFFS_R_SCHED] = "sched",
	[OFFS_R_SLEEP] = "sleep",
	[OFFS_R_NET] = "net",
	[OFFS_R_IPC] = "ipc",
	[OFFS_R_FAULT] = "fault",
	[OFFS_R_STOPPED] = "stopped",
	[OFFS_R_IDLE] = "idle",
	[OFFS_R_OTHER] = "other",
	[OFFS_R_CPU] = "cpu",
};

/* Class code of one frame: a reason in the low nibble plus flags. */
#define FC_REASON_MASK	0x0f
#define FC_NONE		0x0f
#define FC_WEAK		BIT(4)	/* only used if nothing decisive is found */
#define FC_FAULT	BIT(5)	/* page-fault entry path */
#define FC_IDLE		BIT(6)	/* kernel thread idle loop */
#define FC_VALID	BIT(7)	/* marks a filled cache slot */

struct offs_name_class {
	const char *name;
	u8 code;
};

#define D(n, r)		{ n, OFFS_R_##r }
#define W(n, r)		{ n, OFFS_R_##r | FC_WEAK }
#define F(n)		{ n, OFFS_R_FAULT | FC_FAULT }
#define IDL(n)		{ n, FC_NONE | FC_IDLE }

/*
 * Names seen on Debian 6.1 and 6.12 (shared/notes/classify-symbols-*.txt)
 * plus their older/newer spellings.  Sorted at init for bsearch.
 */
static struct offs_name_class offs_names[] = {
	/* disk and block I/O */
	D("io_schedule", IO), D("io_schedule_timeout", IO),
	D("bit_wait_io", IO), D("bit_wait_io_timeout", IO),
	D("blk_io_schedule", IO), D("folio_wait_bit_common", IO),
	D("folio_wait_bit", IO), D("folio_wait_writeback", IO),
	D("folio_wait_stable", IO), D("__folio_lock", IO),
	D("__folio_lock_killable", IO), D("__filemap_fdatawait_range", IO),
	D("blk_mq_get_tag", IO), D("submit_bio_wait", IO),
	D("__wait_on_buffer", IO), D("out_of_line_wait_on_bit", IO),
	D("jbd2_log_wait_commit", IO), D("balance_dirty_pages", IO),
	D("wb_wait_for_completion", IO), D("rq_qos_wait", IO),
	D("wait_on_page_bit_common", IO), D("__lock_page", IO),
	D("__lock_page_killable", IO), D("wait_on_page_writeback", IO),
	D("wait_on_page_bit", IO), D("__blkdev_direct_IO_simple", IO),
	/* locks */
	D("futex_wait_queue", LOCK), D("futex_wait_queue_me", LOCK),
	D("futex_do_wait", LOCK), D("__futex_wait", LOCK),
	D("futex_wait", LOCK), D("futex_wait_multiple", LOCK),
	D("futex_lock_pi", LOCK), D("rt_mutex_wait_proxy_lock", LOCK),
	D("__mutex_lock", LOCK), D("__mutex_lock_slowpath", LOCK),
	D("__mutex_lock_killable_slowpath", LOCK),
	D("__mutex_lock_interruptible_slowpath", LOCK),
	D("__ww_mutex_lock", LOCK),
	D("rwsem_down_read_slowpath", LOCK),
	D("rwsem_down_write_slowpath", LOCK), D("__down_common", LOCK),
	D("__down", LOCK), D("__down_interruptible", LOCK),
	D("__down_killable", LOCK), D("__down_timeout", LOCK),
	D("__percpu_down_read", LOCK), D("percpu_rwsem_wait", LOCK),
	D("percpu_down_write", LOCK), D("rt_mutex_slowlock_block", LOCK),
	D("rt_mutex_slowlock", LOCK), D("__rt_mutex_slowlock", LOCK),
	D("rtlock_slowlock_locked", LOCK), D("rwbase_read_lock", LOCK),
	D("__rwbase_read_lock", LOCK), D("__rt_mutex_slowlock_locked", LOCK),
	D("rt_mutex_schedule", LOCK),
	D("rwbase_write_lock", LOCK), D("locks_lock_inode_wait", LOCK),
	D("fcntl_setlk", LOCK), D("__do_sys_flock", LOCK),
	/* sleeps and timers */
	D("do_nanosleep", SLEEP), D("hrtimer_nanosleep", SLEEP),
	D("common_nsleep", SLEEP), D("common_nsleep_timens", SLEEP),
	D("alarm_timer_nsleep", SLEEP), D("msleep", SLEEP),
	D("msleep_interruptible", SLEEP), D("usleep_range_state", SLEEP),
	W("schedule_timeout", SLEEP),
	/* poll, select, epoll and sockets */
	D("do_epoll_wait", NET), D("ep_poll", NET), D("do_select", NET),
	D("core_sys_select", NET), D("do_sys_poll", NET), D("do_poll", NET),
	D("sk_wait_data", NET), D("inet_csk_accept", NET),
	D("inet_csk_wait_for_connect", NET), D("inet_wait_for_connect", NET),
	D("sk_stream_wait_memory", NET), D("sk_stream_wait_connect", NET),
	D("__skb_wait_for_more_packets", NET),
	D("unix_stream_read_generic", NET), D("unix_stream_data_wait", NET),
	D("unix_wait_for_peer", NET), D("io_cqring_wait", NET),
	W("schedule_hrtimeout_range", NET),
	W("schedule_hrtimeout_range_clock", NET),
	/* pipes, FIFOs, SysV and POSIX IPC, children, signals */
	D("pipe_read", IPC), D("pipe_write", IPC), D("anon_pipe_read", IPC),
	D("anon_pipe_write", IPC), D("pipe_wait_readable", IPC),
	D("pipe_wait_writable", IPC), D("pipe_wait", IPC),
	D("wait_for_partner", IPC), D("do_msgrcv", IPC), D("do_msgsnd", IPC),
	D("do_semtimedop", IPC), D("wq_sleep", IPC),
	D("do_mq_timedreceive", IPC), D("do_mq_timedsend", IPC),
	D("do_wait", IPC), D("kernel_wait4", IPC), D("kernel_waitid", IPC),
	D("sigsuspend", IPC), D("do_sigtimedwait", IPC),
	D("__do_sys_pause", IPC), D("eventfd_read", IPC),
	D("signalfd_dequeue", IPC),
	/* page faults */
	F("exc_page_fault"), F("asm_exc_page_fault"),
	F("do_user_addr_fault"), F("handle_mm_fault"), F("filemap_fault"),
	F("__folio_lock_or_retry"), F("do_page_fault"), F("__do_page_fault"),
	F("page_fault"), F("handle_userfault"),
	/* stopped, traced, frozen */
	D("do_signal_stop", STOPPED), D("ptrace_stop", STOPPED),
	D("__refrigerator", STOPPED), D("kthread_parkme", STOPPED),
	/* kernel threads waiting for work */
	IDL("worker_thread"), IDL("kthread_worker_fn"),
	IDL("smpboot_thread_fn"), IDL("rescuer_thread"),
	IDL("rcu_gp_kthread"), IDL("rcu_tasks_kthread"), IDL("kthreadd"),
	IDL("kswapd"), IDL("kcompactd"), IDL("khugepaged"),
	IDL("kauditd_thread"), IDL("oom_reaper"), IDL("irq_thread"),
};

#undef D
#undef W
#undef F
#undef IDL

static int offs_name_cmp(const void *a, const void *b)
{
	const struct offs_name_class *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static int offs_name_key_cmp(const void *key, const void *elt)
{
	const struct offs_name_class *e = elt;

	return strcmp(key, e->name);
}

/* Class code of a bare symbol name (suffixes already stripped). */
static u8 offs_name_code(const char *name)
{
	const struct offs_name_class *e;

	e = bsearch(name, offs_names, ARRAY_SIZE(offs_names),
		    sizeof(offs_names[0]), offs_name_key_cmp);
	return e ? e->code : FC_NONE;
}

/*
 * Address -> class cache: open addressing, linear probing, fixed size.
 * When it is three quarters full it is simply emptied (counted as a flush
 * of the symbol caches).  Protected by a mutex: every user (the sampler
 * kthread, readers of the threads file, the module notifier) may sleep,
 * and emptying the table (a 256 KiB memset) must not run with interrupts
 * or preemption off.  Symbol resolution happens outside it.
 */
#define OFFS_CC_BITS	14
#define OFFS_CC_SIZE	BIT(OFFS_CC_BITS)

struct offs_cc_slot {
	unsigned long addr;
	u8 code;
};

static struct offs_cc_slot *offs_cc;
static unsigned int offs_cc_used;
static DEFINE_MUTEX(offs_cc_lock);

static bool offs_cc_find(unsigned long addr, u8 *code)
{
	unsigned int i = hash_long(addr, OFFS_CC_BITS);
	unsigned int n;

	for (n = 0; n < OFFS_CC_SIZE; n++, i = (i + 1) & (OFFS_CC_SIZE - 1)) {
		if (!(offs_cc[i].code & FC_VALID))
			return false;
		if (offs_cc[i].addr == addr) {
			*code = offs_cc[i].code & ~FC_VALID;
			return true;
		}
	}
	return false;
}

static void offs_cc_insert(unsigned long addr, u8 code)
{
	unsigned int i = hash_long(addr, OFFS_CC_BITS);

	if (offs_cc_used >= OFFS_CC_SIZE / 4 * 3) {
		memset(offs_cc, 0, OFFS_CC_SIZE * sizeof(*offs_cc));
		offs_cc_used = 0;
		atomic64_inc(&offs_stats.sym_flushes);
	}
	while (offs_cc[i].code & FC_VALID) {
		if (offs_cc[i].addr == addr)
			return;
		i = (i + 1) & (OFFS_CC_SIZE - 1);
	}
	offs_cc[i].addr = addr;
	offs_cc[i].code = code | FC_VALID;
	offs_cc_used++;
}

/* Resolve a return address to a class code (uncached). */
static u8 offs_addr_code(unsigned long addr)
{
	char name[KSYM_SYMBOL_LEN];
	char *p;

	/* addr - 1: a call can be the last instruction of a function. */
	snprintf(name, sizeof(name), "%ps", (void *)(addr - 1));
	/* "__mutex_lock.constprop.0 [mod]" -> "__mutex_lock" */
	p = strpbrk(name, ". ");
	if (p && p != name)
		*p = '\0';
	return offs_name_code(name);
}

static u8 offs_frame_code(unsigned long addr)
{
	bool hit;
	u8 code;

	atomic64_inc(&offs_stats.class_lookups);
	mutex_lock(&offs_cc_lock);
	hit = offs_cc_find(addr, &code);
	mutex_unlock(&offs_cc_lock);
	if (hit) {
		atomic64_inc(&offs_stats.class_hits);
		return code;
	}

	code = offs_addr_code(addr);
	mutex_lock(&offs_cc_lock);
	offs_cc_insert(addr, code);
	mutex_unlock(&offs_cc_lock);
	return code;
}

void offs_frames_info(const unsigned long *ips, unsigned int depth,
		      struct offs_frames_info *info)
{
	unsigned int i;
	u8 code, r;

	info->decisive = OFFS_R_NR;
	info->weak = OFFS_R_NR;
	info->fault = 0;
	info->idle_loop = 0;
	for (i = 0; i < depth; i++) {
		code = offs_frame_code(ips[i]);
		if (code & FC_FAULT)
			info->fault = 1;
		if (code & FC_IDLE)
			info->idle_loop = 1;
		r = code & FC_REASON_MASK;
		if (r == FC_NONE)
			continue;
		if (code & FC_WEAK) {
			if (info->weak == OFFS_R_NR)
				info->weak = r;
		} else if (info->decisive == OFFS_R_NR) {
			info->decisive = r;
		}
	}
}

/*
 * System calls whose purpose is to wait, x86-64 numbering: their reason
 * + 1, 0 for the others.  Calls that can wait for many reasons (read,
 * write, ioctl, openat ...) are left to the frame names.  A table, not a
 * switch: the kernel is built without jump tables, and the switch was a
 * dozen compares and branches a capture (issue 52).
 */
static const u8 offs_sys_reasons[] = {
	[__NR_futex] = OFFS_R_LOCK + 1,
#ifdef __NR_futex_waitv
	[__NR_futex_waitv] = OFFS_R_LOCK + 1,
#endif
	[__NR_flock] = OFFS_R_LOCK + 1,
	[__NR_nanosleep] = OFFS_R_SLEEP + 1,
	[__NR_clock_nanosleep] = OFFS_R_SLEEP + 1,
	[__NR_poll] = OFFS_R_NET + 1,
	[__NR_ppoll] = OFFS_R_NET + 1,
	[__NR_select] = OFFS_R_NET + 1,
	[__NR_pselect6] = OFFS_R_NET + 1,
	[__NR_epoll_wait] = OFFS_R_NET + 1,
	[__NR_epoll_pwait] = OFFS_R_NET + 1,
#ifdef __NR_epoll_pwait2
	[__NR_epoll_pwait2] = OFFS_R_NET + 1,
#endif
	[__NR_accept] = OFFS_R_NET + 1,
	[__NR_accept4] = OFFS_R_NET + 1,
	[__NR_connect] = OFFS_R_NET + 1,
	[__NR_recvfrom] = OFFS_R_NET + 1,
	[__NR_recvmsg] = OFFS_R_NET + 1,
	[__NR_recvmmsg] = OFFS_R_NET + 1,
	[__NR_sendto] = OFFS_R_NET + 1,
	[__NR_sendmsg] = OFFS_R_NET + 1,
	[__NR_sendmmsg] = OFFS_R_NET + 1,
	[__NR_wait4] = OFFS_R_IPC + 1,
	[__NR_waitid] = OFFS_R_IPC + 1,
	[__NR_msgrcv] = OFFS_R_IPC + 1,
	[__NR_msgsnd] = OFFS_R_IPC + 1,
	[__NR_semop] = OFFS_R_IPC + 1,
	[__NR_semtimedop] = OFFS_R_IPC + 1,
	[__NR_mq_timedreceive] = OFFS_R_IPC + 1,
	[__NR_mq_timedsend] = OFFS_R_IPC + 1,
	[__NR_pause] = OFFS_R_IPC + 1,
	[__NR_rt_sigsuspend] = OFFS_R_IPC + 1,
	[__NR_rt_sigtimedwait] = OFFS_R_IPC + 1,
	[__NR_fsync] = OFFS_R_IO + 1,
	[__NR_fdatasync] = OFFS_R_IO + 1,
	[__NR_sync] = OFFS_R_IO + 1,
	[__NR_syncfs] = OFFS_R_IO + 1,
	[__NR_sync_file_range] = OFFS_R_IO + 1,
	[__NR_io_getevents] = OFFS_R_IO + 1,
#ifdef __NR_io_pgetevents
	[__NR_io_pgetevents] = OFFS_R_IO + 1,
#endif
};

static enum offs_reason offs_syscall_reason(long nr)
{
	if ((unsigned long)nr >= ARRAY_SIZE(offs_sys_reasons) ||
	    !offs_sys_reasons[nr])
		return OFFS_R_NR;
	return offs_sys_reasons[nr] - 1;
}

enum offs_reason offs_reason_of(const struct offs_sample *s,
				const struct offs_frames_info *info)
{
	enum offs_reason r;

	if (s->oncpu)
		return OFFS_R_CPU;
	switch (s->state_ch) {
	case 'T':
	case 't':
	case 'F':
		return OFFS_R_STOPPED;
	case 'R':
		return OFFS_R_SCHED;
	case 'I':
	case 'P':
		return OFFS_R_IDLE;
	}
	if (s->state & TASK_RTLOCK_WAIT)
		return OFFS_R_LOCK;
	if (s->iowait)
		return OFFS_R_IO;
	if (!s->kthread) {
		if (s->syscall == -1 && info->fault)
			return OFFS_R_FAULT;
		r = offs_syscall_reason(s->syscall);
		if (r != OFFS_R_NR)
			return r;
	}
	if (info->decisive != OFFS_R_NR)
		return info->decisive;
	if (s->kthread && (s->state_ch == 'S' || info->idle_loop))
		return OFFS_R_IDLE;
	if (info->weak != OFFS_R_NR)
		return info->weak;
	return OFFS_R_OTHER;
}

void offs_classify_flush(void)
{
	mutex_lock(&offs_cc_lock);
	memset(offs_cc, 0, OFFS_CC_SIZE * sizeof(*offs_cc));
	offs_cc_used = 0;
	mutex_unlock(&offs_cc_lock);
}

int offs_classify_init(void)
{
	sort(offs_names, ARRAY_SIZE(offs_names), sizeof(offs_names[0]),
	     offs_name_cmp, NULL);
	offs_cc = vzalloc(OFFS_CC_SIZE * sizeof(*offs_cc));
	if (!offs_cc)
		return -ENOMEM;
	atomic64_add(OFFS_CC_SIZE * sizeof(*offs_cc), &offs_stats.memory_bytes);
	return 0;
}

void offs_classify_exit(void)
{
	vfree(offs_cc);
	atomic64_sub(OFFS_CC_SIZE * sizeof(*offs_cc), &offs_stats.memory_bytes);
	offs_cc = NULL;
}
