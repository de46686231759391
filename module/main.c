// SPDX-License-Identifier: GPL-2.0
/*
 * offsample - sample off-CPU kernel stacks of every thread, classify why
 * each thread waits, aggregate identical stacks with counts, and serve the
 * result as text under /proc/offsample.
 *
 * main.c: init and exit, in order; the parameters are in params.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>

#include "offsample.h"
#include "params.h"
#include "unwind.h"
#include "table.h"
#include "blocker.h"
#include "threadcache.h"
#include "ustack.h"
#include "wobj.h"
#include "cficache.h"
#include "cgroup.h"
#include "classify.h"
#include "hash.h"
#include "procfs.h"
#include "sampler.h"
#include "symcache.h"

static int __init offs_init(void)
{
	int err;

	offs_params_clamp_defaults();
	offs_hash_init();
	err = offs_cgroup_init();
	if (err)
		return err;
	err = offs_classify_init();
	if (err)
		goto err_cgroup;
	err = offs_symcache_init();
	if (err)
		goto err_classify;
	err = offs_table_init();
	if (err)
		goto err_symcache;
	err = offs_tc_init();
	if (err)
		goto err_table;
	err = offs_cficache_init();
	if (err)
		goto err_cache;
	err = offs_unwind_init();
	if (err)
		goto err_ucache;
	err = offs_sampler_start();
	if (err)
		goto err_unwind;
	err = offs_procfs_init();
	if (err)
		goto err_sampler;
	offs_params_live();
	pr_info("version %s loaded, hz=%u enabled=%d\n", OFFS_VERSION,
		offs_hz, offs_enabled);
	return 0;

err_sampler:
	offs_sampler_stop();
err_unwind:
	offs_unwind_exit();
err_ucache:
	offs_cficache_exit();
err_cache:
	offs_tc_exit();
err_table:
	offs_table_exit();
	offs_ustack_exit();
err_symcache:
	offs_symcache_exit();
err_classify:
	offs_classify_exit();
err_cgroup:
	offs_cgroup_exit();
	return err;
}

static void __exit offs_exit(void)
{
	/* Parameter writes from now on change only the values. */
	offs_params_dead();
	/* Readers first: proc_remove() waits for them and closes their files. */
	offs_procfs_exit();
	offs_sampler_stop();
	offs_unwind_exit();
	offs_cficache_exit();
	offs_tc_exit();
	offs_table_exit();
	offs_ustack_exit();
	offs_cgroup_exit();
	offs_symcache_exit();
	offs_classify_exit();
	pr_info("unloaded\n");
}

module_init(offs_init);
module_exit(offs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Off-CPU stack sampler with in-kernel aggregation by wait reason");
MODULE_VERSION(OFFS_VERSION);
