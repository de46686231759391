// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup.c - which cgroup (v2) a thread is in, and sampling restricted to
 * one cgroup subtree (the "cgroup" parameter), so a container host can
 * profile one service.
 *
 * Records carry the cgroup id (cheap to read at every sample); the path is
 * looked up from the id only when a file is read.  A cgroup removed since
 * prints as "cgroup-id:N".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/kernfs.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "offsample.h"
#include "cgroup.h"

/*
 * Protects the target cgroup, its path and offs_cg_live.  A sleeping lock:
 * resolving a path takes kernfs locks.  Taken in parameter writes (under
 * the module's kernel_param_lock) and by the sampler once per tick; the
 * param lock is never taken under it.
 */
static DEFINE_MUTEX(offs_cg_lock);
static struct cgroup *offs_cg_target;
static char offs_cg_param[256];
/*
 * The target holds a cgroup reference only between offs_cgroup_init() and
 * offs_cgroup_exit().  A write before init (insmod cgroup=...; init may
 * still fail) or after exit (a sysfs write racing rmmod: the parameter
 * files go away only after exit returns) stores the path alone, so no
 * reference can outlive the module.
 */
static bool offs_cg_live;

/*
 * cgroup_get_from_path() walks every component with kernfs_find_ns(),
 * which does not check that the parent is a directory; a component that
 * is an open cgroup file ("/cgroup.procs/x") makes it walk the file's
 * open-file list as if it were an rbtree of children (an oops).  Resolve
 * one component more at a time instead: each prefix was checked to be a
 * directory (cgroup_get_from_path() returns -ENOTDIR for anything else)
 * before a name is looked up under it.
 */
static struct cgroup *offs_cg_resolve(char *path)
{
	struct cgroup *cg = NULL;	/* no component: the root, everything */
	char *end = path, save;

	for (;;) {
		while (*end == '/')
			end++;
		if (!*end)
			break;
		end = strchrnul(end, '/');
		save = *end;
		*end = '\0';
		if (cg)
			cgroup_put(cg);
		/* Sleeps: kernfs rwsem; relative to the writer's cgroup ns. */
		cg = cgroup_get_from_path(path);
		*end = save;
		if (IS_ERR(cg))
			break;
	}
	return cg;
}

/*
 * The cgroup at path (relative to the caller's cgroup namespace), with a
 * reference, for a session's filter (session.c): NULL for the root (no
 * filter), or an ERR_PTR (-ENOENT, -ENOTDIR).  Sleeps (kernfs).
 */
struct cgroup *offs_cgroup_lookup(const char *path)
{
	char buf[sizeof(offs_cg_param)];
	struct cgroup *cg;

	if (strscpy(buf, path, sizeof(buf)) < 0)
		return ERR_PTR(-ENAMETOOLONG);
	cg = offs_cg_resolve(strim(buf));
	if (IS_ERR(cg))
		return PTR_ERR(cg) == -ENOTDIR ? ERR_PTR(-ENOTDIR) :
						 ERR_PTR(-ENOENT);
	return cg;
}

/* Resolve the stored path into the target; offs_cg_lock held. */
static int offs_cg_apply(char *p)
{
	struct cgroup *cg, *old;

	cg = offs_cg_resolve(p);	/* NULL for "", "/", "//" ... */
	if (IS_ERR(cg))
		return PTR_ERR(cg) == -ENOTDIR ? -ENOTDIR : -ENOENT;
	old = offs_cg_target;
	offs_cg_target = cg;
	strscpy(offs_cg_param, cg ? p : "", sizeof(offs_cg_param));
	if (old)
		cgroup_put(old);
	return 0;
}

/*
 * Restrict sampling to the subtree at path (relative to the cgroup v2
 * root, e.g. "/system.slice/postgresql.service"); "", "/" (or only
 * slashes) removes the restriction.  Before the module is initialised the
 * path is only stored; offs_cgroup_init() resolves it.
 */
int offs_cgroup_set(const char *path)
{
	char buf[sizeof(offs_cg_param)];
	char *p;
	int err = 0;

	if (strscpy(buf, path, sizeof(buf)) < 0)
		return -EINVAL;
	p = strim(buf);
	mutex_lock(&offs_cg_lock);
	if (offs_cg_live)
		err = offs_cg_apply(p);
	else
		strscpy(offs_cg_param, p, sizeof(offs_cg_param));
	mutex_unlock(&offs_cg_lock);
	return err;
}

/* Module init: resolve a cgroup= given at load time (ENOENT fails insmod). */
int offs_cgroup_init(void)
{
	char buf[sizeof(offs_cg_param)];
	int err;

	mutex_lock(&offs_cg_lock);
	strscpy(buf, offs_cg_param, sizeof(buf));
	err = offs_cg_apply(buf);
	if (!err)
		offs_cg_live = true;
	else
		offs_cg_param[0] = '\0';
	mutex_unlock(&offs_cg_lock);
	if (err)
		pr_err("cgroup=%s: %s\n", buf,
		       err == -ENOTDIR ? "not a cgroup" : "no such cgroup");
	return err;
}

int offs_cgroup_get_param(char *buf, size_t len)
{
	int n;

	mutex_lock(&offs_cg_lock);
	n = snprintf(buf, len, "%s\n", offs_cg_param);
	mutex_unlock(&offs_cg_lock);
	return n;
}

/* The target for one tick, with a reference, or NULL for "everything". */
struct cgroup *offs_cgroup_target_get(void)
{
	struct cgroup *cg;

	mutex_lock(&offs_cg_lock);
	cg = offs_cg_target;
	if (cg)
		cgroup_get(cg);
	mutex_unlock(&offs_cg_lock);
	return cg;
}

void offs_cgroup_target_put(struct cgroup *cg)
{
	if (cg)
		cgroup_put(cg);
}

bool offs_task_in_cgroup(struct task_struct *t, struct cgroup *cg)
{
	bool in;

	rcu_read_lock();
	in = cgroup_is_descendant(task_dfl_cgroup(t), cg);
	rcu_read_unlock();
	return in;
}

/* Is ns rooted at the top of the hierarchy (the initial cgroup ns)? */
static bool offs_cgns_is_top(struct cgroup_namespace *ns)
{
	return !ns || !cgroup_parent(ns->root_cset->dfl_cgrp);
}

/*
 * Path of a cgroup from its id, for printing, relative to the reader's
 * cgroup namespace ns (as /proc/PID/cgroup shows it: a cgroup outside the
 * namespace starts with "/.."); may sleep.  A reader in the initial
 * namespace gets the kernfs path directly, without cgroup_mutex, which
 * cgroup_path_ns() takes.
 */
int offs_cgroup_path(u64 id, struct cgroup_namespace *ns, char *buf,
		     size_t len)
{
	struct cgroup *cg = offs_cgroup_get_from_id(id);
	int n;

	if (IS_ERR_OR_NULL(cg))
		return snprintf(buf, len, "cgroup-id:%llu", id);
	if (offs_cgns_is_top(ns)) {
		n = kernfs_path_from_node(cg->kn, NULL, buf, len);
	} else if (!cgroup_is_descendant(cg, ns->root_cset->dfl_cgrp)) {
		/*
		 * Outside the opener's namespace: not named, whichever
		 * namespace the reading task (which cgroup_get_from_id()
		 * checks) is in.
		 */
		n = -ENOENT;
	} else {
		n = cgroup_path_ns(cg, buf, len, ns);
	}
	cgroup_put(cg);
	if (n < 0)
		return snprintf(buf, len, "cgroup-id:%llu", id);
	return n;
}

void offs_cgroup_exit(void)
{
	struct cgroup *old;

	mutex_lock(&offs_cg_lock);
	offs_cg_live = false;
	old = offs_cg_target;
	offs_cg_target = NULL;
	mutex_unlock(&offs_cg_lock);
	if (old)
		cgroup_put(old);
}
