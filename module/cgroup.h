/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup.c: a thread's cgroup (v2), the "cgroup" parameter's subtree. */
#ifndef OFFS_CGROUP_H
#define OFFS_CGROUP_H

#include <linux/types.h>

struct cgroup;
struct cgroup_namespace;
struct task_struct;

int offs_cgroup_init(void);
int offs_cgroup_set(const char *path);
int offs_cgroup_get_param(char *buf, size_t len);
struct cgroup *offs_cgroup_target_get(void);
void offs_cgroup_target_put(struct cgroup *cg);
bool offs_task_in_cgroup(struct task_struct *t, struct cgroup *cg);
struct cgroup *offs_cgroup_lookup(const char *path);
int offs_cgroup_path(u64 id, struct cgroup_namespace *ns, char *buf,
		     size_t len);
void offs_cgroup_exit(void);

#endif /* OFFS_CGROUP_H */
