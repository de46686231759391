// SPDX-License-Identifier: GPL-2.0
/*
 * params.c - the module parameters (/sys/module/offsample/parameters):
 * their values, setters, bounds, and what a size parameter may reserve on
 * this machine.  Everyone else reads them with READ_ONCE() (params.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/math64.h>

#include "offsample.h"
#include "params.h"
#include "table.h"
#include "blocker.h"
#include "threadcache.h"
#include "ustack.h"
#include "upath.h"
#include "wobj.h"
#include "cficache.h"
#include "cgroup.h"
#include "procfs.h"
#include "sampler.h"
#include "pystack.h"

unsigned int offs_hz = 9;
unsigned int offs_max_stacks = 8192;
unsigned int offs_max_depth = 48;
bool offs_enabled = true;
bool offs_kthreads = true;
unsigned int offs_key_fields;
unsigned int offs_thread_cache = 65536;
bool offs_user_stacks = true;
bool offs_python_stacks = true;
bool offs_blockers = true;
bool offs_oncpu = true;
unsigned int offs_critical_pct = 50;
unsigned int offs_max_user_depth = 32;
unsigned int offs_max_retired = 4;
unsigned int offs_max_sessions = 4;
unsigned int offs_threads_rate = 20000;
unsigned int offs_cfi_cache_mb = 64;
unsigned int offs_cfi_build_ms = 1000;
unsigned int offs_config_seq;

/* Set once init is done: from then on parameters are written from sysfs. */
static bool offs_live;

#define OFFS_HZ_MAX		1000U
#define OFFS_MAX_STACKS_MIN	16U
#define OFFS_MAX_STACKS_MAX	1048576U
#define OFFS_THREAD_CACHE_MAX	4194304U
#define OFFS_RETIRED_MAX	16U
#define OFFS_THREADS_RATE_MAX	10000000U

/*
 * What one unit of max_stacks can pin at worst, as allocated: each
 * subsystem says what its part of one distinct stack costs (the table
 * with the generations readers may keep, a user stack, a path, a Python
 * function's name, a wait object).
 */
static u64 offs_stack_cost(void)
{
	return offs_table_unit_cost(OFFS_RETIRED_MAX) +
	       offs_ustack_unit_cost() + offs_upath_unit_cost() +
	       offs_pyname_unit_cost() + offs_wobj_unit_cost();
}

static u64 offs_ram_bytes(void)
{
	return (u64)totalram_pages() << PAGE_SHIFT;
}

/* The largest max_stacks whose worst case fits in 1/8 of RAM. */
unsigned int offs_max_stacks_limit(void)
{
	u64 n = div64_u64(offs_ram_bytes() / 8, offs_stack_cost());

	return clamp_t(u64, n, OFFS_MAX_STACKS_MIN, OFFS_MAX_STACKS_MAX);
}

/* The largest thread_cache whose entries fit in 1/16 of RAM. */
unsigned int offs_thread_cache_limit(void)
{
	u64 n = div64_u64(offs_ram_bytes() / 16, offs_tc_entry_size());

	return min_t(u64, n, OFFS_THREAD_CACHE_MAX);
}

void offs_config_changed(void)
{
	/*
	 * Parameter writes are serialized by the module's kernel_param_lock.
	 * Release: a tick that sees the new sequence (acquire, sampler.c)
	 * also sees the new value.
	 */
	smp_store_release(&offs_config_seq, offs_config_seq + 1);
}

/*
 * Parameter setters run with the module's kernel_param_lock held, possibly
 * while the module is being unloaded; they only touch static data.  A bad
 * value is rejected with -EINVAL and changes nothing.
 *
 * Writes need CAP_SYS_ADMIN (as reading the results does), on top of the
 * file mode (0644 root) that sysfs checks at open: root in a container
 * without it cannot pause or reconfigure a host-wide sampler.  While the
 * module is not live the values come from the loader, who has
 * CAP_SYS_MODULE; the sysfs files exist then too (from before offs_init()
 * runs until after offs_exit() returns), and a writer that is not the
 * loader must not get in through that window: it needs CAP_SYS_MODULE.
 * capable() asks about the writer: setters run in its context.
 */
static int offs_may_set(void)
{
	/* The loader is asked about CAP_SYS_MODULE first: no audit noise. */
	if (READ_ONCE(offs_live) ? capable(CAP_SYS_ADMIN) :
	    capable(CAP_SYS_MODULE) || capable(CAP_SYS_ADMIN))
		return 0;
	return -EPERM;
}

static int offs_parse_uint(const char *val, unsigned int min, unsigned int max,
			   unsigned int *out)
{
	unsigned int v;

	if (!val || kstrtouint(val, 10, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int offs_set_hz(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (offs_may_set())
		return -EPERM;
	if (offs_parse_uint(val, 1, OFFS_HZ_MAX, &v))
		return -EINVAL;
	WRITE_ONCE(offs_hz, v);
	offs_sampler_kick();
	return 0;
}

static int offs_set_max_stacks(const char *val, const struct kernel_param *kp)
{
	unsigned int v, lim;

	if (offs_may_set())
		return -EPERM;
	if (offs_parse_uint(val, OFFS_MAX_STACKS_MIN, OFFS_MAX_STACKS_MAX, &v))
		return -EINVAL;
	lim = offs_max_stacks_limit();
	if (v > lim) {
		pr_warn_ratelimited("max_stacks=%u refused: at worst it would pin %llu MiB, more than 1/8 of RAM; at most %u on this machine\n",
				    v, (u64)v * offs_stack_cost() >> 20, lim);
		return -EINVAL;
	}
	WRITE_ONCE(offs_max_stacks, v);
	return 0;
}

/* A plain number in [min, max]; config: it shapes captures (threadcache.c). */
struct offs_range_param {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
	bool config;
};

static int offs_set_range(const char *val, const struct kernel_param *kp)
{
	const struct offs_range_param *p = kp->arg;
	unsigned int v;

	if (offs_may_set())
		return -EPERM;
	if (offs_parse_uint(val, p->min, p->max, &v))
		return -EINVAL;
	WRITE_ONCE(*p->val, v);
	if (p->config)
		offs_config_changed();
	return 0;
}

static int offs_get_range(char *buf, const struct kernel_param *kp)
{
	const struct offs_range_param *p = kp->arg;

	return sprintf(buf, "%u\n", READ_ONCE(*p->val));
}

static struct offs_range_param offs_max_depth_range = {
	&offs_max_depth, 1, OFFS_MAX_DEPTH_LIMIT, true,
};

static struct offs_range_param offs_max_user_depth_range = {
	&offs_max_user_depth, 1, OFFS_MAX_DEPTH_LIMIT, true,
};

static struct offs_range_param offs_max_retired_range = {
	&offs_max_retired, 1, OFFS_RETIRED_MAX, false,
};

static struct offs_range_param offs_max_sessions_range = {
	&offs_max_sessions, 0, OFFS_SESSIONS_MAX, false,
};

static struct offs_range_param offs_critical_pct_range = {
	&offs_critical_pct, 1, 100, false,
};

static struct offs_range_param offs_threads_rate_range = {
	&offs_threads_rate, 1, OFFS_THREADS_RATE_MAX, false,
};

static struct offs_range_param offs_cfi_build_ms_range = {
	&offs_cfi_build_ms, 10, 60000, false,
};

/* The largest cfi_cache_mb this machine allows: 1/16 of RAM. */
unsigned int offs_cfi_cache_limit(void)
{
	return min_t(u64, offs_ram_bytes() / 16 >> 20, 65536);
}

static int offs_set_cfi_cache(const char *val, const struct kernel_param *kp)
{
	unsigned int v, lim;

	if (offs_may_set())
		return -EPERM;
	if (offs_parse_uint(val, 0, INT_MAX, &v))
		return -EINVAL;
	lim = offs_cfi_cache_limit();
	if (v > lim) {
		pr_warn_ratelimited("cfi_cache_mb=%u refused: more than 1/16 of RAM; at most %u on this machine\n",
				    v, lim);
		return -EINVAL;
	}
	WRITE_ONCE(offs_cfi_cache_mb, v);
	/* Captures change (CFI or frame pointers); tables over the cap go. */
	offs_config_changed();
	if (READ_ONCE(offs_live))
		offs_cficache_shrink();
	return 0;
}

/* Files that failed for want of time are tried again with the new budget. */
static int offs_set_cfi_build_ms(const char *val, const struct kernel_param *kp)
{
	int err = offs_set_range(val, kp);

	if (!err && READ_ONCE(offs_live))
		offs_cficache_retry();
	return err;
}

static int offs_set_cgroup(const char *val, const struct kernel_param *kp)
{
	int err;

	if (offs_may_set())
		return -EPERM;
	err = val ? offs_cgroup_set(val) : -EINVAL;
	if (!err)
		offs_config_changed();
	return err;
}

static int offs_get_cgroup(char *buf, const struct kernel_param *kp)
{
	return offs_cgroup_get_param(buf, PAGE_SIZE);
}

/* A numeric group id (initial user namespace), or "" / -1 for none. */
static int offs_set_group(const char *val, const struct kernel_param *kp)
{
	char buf[16], *s;
	unsigned int v;
	kgid_t gid;

	if (!val || strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	s = strim(buf);
	if (!*s || !strcmp(s, "-1"))
		return offs_procfs_set_group(INVALID_GID);
	if (kstrtouint(s, 10, &v))
		return -EINVAL;
	gid = make_kgid(&init_user_ns, v);
	if (!gid_valid(gid))
		return -EINVAL;
	return offs_procfs_set_group(gid);
}

static int offs_get_group(char *buf, const struct kernel_param *kp)
{
	kgid_t gid = offs_procfs_group();

	if (!gid_valid(gid))
		return sprintf(buf, "\n");
	return sprintf(buf, "%u\n", from_kgid(&init_user_ns, gid));
}

static int offs_set_thread_cache(const char *val, const struct kernel_param *kp)
{
	unsigned int v, lim;

	if (offs_may_set())
		return -EPERM;
	if (offs_parse_uint(val, 0, OFFS_THREAD_CACHE_MAX, &v))
		return -EINVAL;
	lim = offs_thread_cache_limit();
	if (v > lim) {
		pr_warn_ratelimited("thread_cache=%u refused: its entries would take %llu MiB, more than 1/16 of RAM; at most %u on this machine\n",
				    v, (u64)v * offs_tc_entry_size() >> 20, lim);
		return -EINVAL;
	}
	WRITE_ONCE(offs_thread_cache, v);
	return 0;
}

/*
 * Turning sampling off returns once no tick is in progress; a writer
 * killed while it waits gets -EINTR (sampling is off all the same).
 */
static int offs_set_enabled(const char *val, const struct kernel_param *kp)
{
	bool v;

	if (offs_may_set())
		return -EPERM;
	if (!val || kstrtobool(val, &v))
		return -EINVAL;
	WRITE_ONCE(offs_enabled, v);
	offs_sampler_kick();
	if (!v && READ_ONCE(offs_live))
		return offs_sampler_quiesce();
	return 0;
}

/* kthreads, user_stacks, python_stacks, blockers, kstack_cache, oncpu: captures change. */
static int offs_set_bool(const char *val, const struct kernel_param *kp)
{
	bool v;

	if (offs_may_set())
		return -EPERM;
	if (!val || kstrtobool(val, &v))
		return -EINVAL;
	WRITE_ONCE(*(bool *)kp->arg, v);
	offs_config_changed();
	return 0;
}

static const struct {
	const char *name;
	unsigned int bit;
} offs_key_names[] = {
	{ "comm", 0 },
	{ "pid", OFFS_KEY_PID },
	{ "tid", OFFS_KEY_TID },
	{ "tname", OFFS_KEY_TNAME },
	{ "wobj", OFFS_KEY_WOBJ },
};

/*
 * "comm", "comm,pid", "pid,tname" ... (comm is always part of the key)
 * into OFFS_KEY_* bits: the key parameter and sessions' key= (session.c).
 */
int offs_parse_key(const char *val, unsigned int *out)
{
	char buf[64], *s, *tok;
	unsigned int fields = 0, i;

	if (!val || strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	s = strim(buf);
	if (!*s)
		return -EINVAL;
	while ((tok = strsep(&s, ",+")) != NULL) {
		for (i = 0; i < ARRAY_SIZE(offs_key_names); i++)
			if (!strcmp(tok, offs_key_names[i].name))
				break;
		if (i == ARRAY_SIZE(offs_key_names))
			return -EINVAL;
		fields |= offs_key_names[i].bit;
	}
	*out = fields;
	return 0;
}

static int offs_set_key(const char *val, const struct kernel_param *kp)
{
	unsigned int fields;

	if (offs_may_set())
		return -EPERM;
	if (offs_parse_key(val, &fields))
		return -EINVAL;
	WRITE_ONCE(offs_key_fields, fields);
	offs_config_changed();
	return 0;
}

static int offs_get_key(char *buf, const struct kernel_param *kp)
{
	unsigned int fields = READ_ONCE(offs_key_fields), i;
	int n = sprintf(buf, "comm");

	for (i = 1; i < ARRAY_SIZE(offs_key_names); i++)
		if (fields & offs_key_names[i].bit)
			n += sprintf(buf + n, ",%s", offs_key_names[i].name);
	return n + sprintf(buf + n, "\n");
}

static const struct kernel_param_ops offs_hz_ops = {
	.set = offs_set_hz, .get = param_get_uint,
};

static const struct kernel_param_ops offs_max_stacks_ops = {
	.set = offs_set_max_stacks, .get = param_get_uint,
};

static const struct kernel_param_ops offs_range_ops = {
	.set = offs_set_range, .get = offs_get_range,
};

static const struct kernel_param_ops offs_cfi_build_ms_ops = {
	.set = offs_set_cfi_build_ms, .get = offs_get_range,
};

static const struct kernel_param_ops offs_cfi_cache_ops = {
	.set = offs_set_cfi_cache, .get = param_get_uint,
};

static const struct kernel_param_ops offs_cgroup_ops = {
	.set = offs_set_cgroup, .get = offs_get_cgroup,
};

static const struct kernel_param_ops offs_group_ops = {
	.set = offs_set_group, .get = offs_get_group,
};

static const struct kernel_param_ops offs_thread_cache_ops = {
	.set = offs_set_thread_cache, .get = param_get_uint,
};

static const struct kernel_param_ops offs_enabled_ops = {
	.set = offs_set_enabled, .get = param_get_bool,
};

static const struct kernel_param_ops offs_bool_ops = {
	.set = offs_set_bool, .get = param_get_bool,
};

static const struct kernel_param_ops offs_key_ops = {
	.set = offs_set_key, .get = offs_get_key,
};

module_param_cb(enabled, &offs_enabled_ops, &offs_enabled, 0644);
MODULE_PARM_DESC(enabled, "Sample (1, default) or pause (0); writing 0 waits for a tick in progress");
module_param_cb(hz, &offs_hz_ops, &offs_hz, 0644);
MODULE_PARM_DESC(hz, "Ticks per second, 1..1000 (default 9)");
module_param_cb(max_stacks, &offs_max_stacks_ops, &offs_max_stacks, 0644);
MODULE_PARM_DESC(max_stacks, "Bound on distinct stacks and on records per generation, 16..1048576 (default 8192)");
module_param_cb(max_depth, &offs_range_ops, &offs_max_depth_range, 0644);
MODULE_PARM_DESC(max_depth, "Kernel frames kept per stack, 1..128 (default 48)");
module_param_cb(thread_cache, &offs_thread_cache_ops, &offs_thread_cache, 0644);
MODULE_PARM_DESC(thread_cache, "Threads remembered so that an unchanged thread is not unwound again, 0..4194304 (default 65536, 0 disables)");
module_param_cb(kthreads, &offs_bool_ops, &offs_kthreads, 0644);
MODULE_PARM_DESC(kthreads, "Also sample kernel threads (default 1)");
module_param_cb(key, &offs_key_ops, &offs_key_fields, 0644);
MODULE_PARM_DESC(key, "Extra aggregation key fields: comma list of pid, tid, tname, wobj (default \"comm\")");
module_param_cb(user_stacks, &offs_bool_ops, &offs_user_stacks, 0644);
MODULE_PARM_DESC(user_stacks, "Walk user stacks with frame pointers and map them to files (default 1)");
module_param_cb(python_stacks, &offs_bool_ops, &offs_python_stacks, 0644);
MODULE_PARM_DESC(python_stacks, "Put CPython 3.11-3.13 frames in user stacks in place of the interpreter's (default 1; needs user_stacks and cfi_cache_mb)");
module_param_cb(max_user_depth, &offs_range_ops, &offs_max_user_depth_range, 0644);
MODULE_PARM_DESC(max_user_depth, "User frames kept per stack, 1..128 (default 32)");
module_param_cb(max_retired, &offs_range_ops, &offs_max_retired_range, 0644);
MODULE_PARM_DESC(max_retired, "Old generations that open stacks/drain files may keep alive; drains and resets beyond it fail with EBUSY, 1..16 (default 4)");
module_param_cb(max_sessions, &offs_range_ops, &offs_max_sessions_range, 0644);
MODULE_PARM_DESC(max_sessions, "Sessions (/proc/offsample/session) open at once, 0..4 (default 4, 0: none)");
module_param_cb(threads_rate, &offs_range_ops, &offs_threads_rate_range, 0644);
MODULE_PARM_DESC(threads_rate, "Thread stacks the threads file unwinds per second, all readers together, 1..10000000 (default 20000)");
module_param_cb(cfi_cache_mb, &offs_cfi_cache_ops, &offs_cfi_cache_mb, 0644);
MODULE_PARM_DESC(cfi_cache_mb, "MiB of compiled .eh_frame tables for user stacks without frame pointers, 0..1/16 of RAM (default 64, 0: frame pointers only)");
module_param_cb(cfi_build_ms, &offs_cfi_build_ms_ops, &offs_cfi_build_ms_range, 0644);
MODULE_PARM_DESC(cfi_build_ms, "CPU time one .eh_frame table build may take before it fails, ms, 10..60000 (default 1000)");
module_param_cb(blockers, &offs_bool_ops, &offs_blockers, 0644);
MODULE_PARM_DESC(blockers, "Name the holder of a user-space lock a sampled thread waits for (glibc mutex, rwlock, PI futex) and count waiter -> holder edges (default 1)");
module_param_cb(kstack_cache, &offs_bool_ops, &offs_kstack_cache, 0644);
MODULE_PARM_DESC(kstack_cache, "Serve a kernel stack seen before from memory when every return address is still in its slot, without the unwinder (default 1)");
module_param_cb(oncpu, &offs_bool_ops, &offs_oncpu, 0644);
MODULE_PARM_DESC(oncpu, "Also sample threads running on a CPU (reason cpu), with an IPI to their CPU (default 1)");
module_param_cb(critical_pct, &offs_range_ops, &offs_critical_pct_range, 0644);
MODULE_PARM_DESC(critical_pct, "A process is critical at a tick when at most this percentage of its threads are active, 1..100 (default 50)");
/* Read-only once loaded: see offs_procfs_set_group(). */
module_param_cb(group, &offs_group_ops, NULL, 0444);
MODULE_PARM_DESC(group, "Numeric group id allowed to read /proc/offsample, set at load time (default: root only)");
module_param_cb(cgroup, &offs_cgroup_ops, NULL, 0644);
MODULE_PARM_DESC(cgroup, "Sample only this cgroup v2 subtree, e.g. /system.slice/foo.service (default: everything)");

/* Defaults larger than a small machine allows are lowered, and said. */
void offs_params_clamp_defaults(void)
{
	unsigned int lim = offs_max_stacks_limit();

	if (offs_max_stacks > lim) {
		pr_notice("max_stacks lowered from %u to %u (1/8 of RAM)\n",
			  offs_max_stacks, lim);
		offs_max_stacks = lim;
	}
	lim = offs_cfi_cache_limit();
	if (offs_cfi_cache_mb > lim) {
		pr_notice("cfi_cache_mb lowered from %u to %u (1/16 of RAM)\n",
			  offs_cfi_cache_mb, lim);
		offs_cfi_cache_mb = lim;
	}
	lim = offs_thread_cache_limit();
	if (offs_thread_cache > lim) {
		pr_notice("thread_cache lowered from %u to %u (1/16 of RAM)\n",
			  offs_thread_cache, lim);
		offs_thread_cache = lim;
	}
}

/* offs_init() is done: writes from now on reach a running sampler. */
void offs_params_live(void)
{
	WRITE_ONCE(offs_live, true);
}

/*
 * offs_exit() is about to tear down: parameter writes from now on change
 * only the values.  A setter runs under kernel_param_lock, so once it is
 * released here none is still acting on offs_live being true (shrinking
 * a cache, waiting for a tick) while what it acts on is torn down.
 */
void offs_params_dead(void)
{
	kernel_param_lock(THIS_MODULE);
	WRITE_ONCE(offs_live, false);
	kernel_param_unlock(THIS_MODULE);
}
