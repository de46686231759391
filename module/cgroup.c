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
#include <linux/cgroup.h>
#include <linux/kernfs.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "offsample.h"

/* Protects the target cgroup and its path; held only briefly. */
static DEFINE_MUTEX(offs_cg_lock);
static struct cgroup *offs_cg_target;
static char offs_cg_param[256];

u64 offs_task_cgid(struct task_struct *t)
{
	u64 id;

	/* The css_set of a task is RCU-protected. */
	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(t));
	rcu_read_unlock();
	return id;
}

/*
 * Restrict sampling to the subtree at path (relative to the cgroup v2
 * root, e.g. "/system.slice/postgresql.service"); "" or "/" removes the
 * restriction.
 */
int offs_cgroup_set(const char *path)
{
	char buf[sizeof(offs_cg_param)];
	struct cgroup *cg = NULL, *old;
	char *p;

	if (strscpy(buf, path, sizeof(buf)) < 0)
		return -EINVAL;
	p = strim(buf);
	if (*p && strcmp(p, "/")) {
		cg = cgroup_get_from_path(p);
		if (IS_ERR(cg))
			return PTR_ERR(cg) == -ENOENT ? -ENOENT : -EINVAL;
	}
	mutex_lock(&offs_cg_lock);
	old = offs_cg_target;
	offs_cg_target = cg;
	strscpy(offs_cg_param, cg ? p : "", sizeof(offs_cg_param));
	mutex_unlock(&offs_cg_lock);
	if (old)
		cgroup_put(old);
	return 0;
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

/* Path of a cgroup from its id, for printing; may sleep. */
int offs_cgroup_path(u64 id, char *buf, size_t len)
{
	struct cgroup *cg = cgroup_get_from_id(id);
	int n;

	if (IS_ERR_OR_NULL(cg))
		return snprintf(buf, len, "cgroup-id:%llu", id);
	n = kernfs_path_from_node(cg->kn, NULL, buf, len);
	cgroup_put(cg);
	if (n < 0)
		return snprintf(buf, len, "cgroup-id:%llu", id);
	return n;
}

void offs_cgroup_exit(void)
{
	offs_cgroup_set("");
}
