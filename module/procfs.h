/* SPDX-License-Identifier: GPL-2.0 */
/* procfs.c, proc_stacks.c, proc_threads.c: the files under /proc/offsample. */
#ifndef OFFS_PROCFS_H
#define OFFS_PROCFS_H

#include <linux/uidgid.h>
#include <linux/proc_fs.h>

struct file;
struct seq_file;
struct pid_namespace;
struct cgroup_namespace;

int offs_procfs_init(void);
void offs_procfs_exit(void);
int offs_procfs_set_group(kgid_t gid);
kgid_t offs_procfs_group(void);

/*
 * Between the files of /proc/offsample (procfs.c, proc_stacks.c,
 * proc_threads.c): access decided at open, the opener's namespaces, the
 * escaping every line uses, and the file operations procfs.c registers.
 */
enum offs_access {
	OFFS_ACC_NONE,
	OFFS_ACC_GROUP,		/* group= member: reduced view, read only */
	OFFS_ACC_ADMIN,		/* CAP_SYS_ADMIN in the initial user ns */
};

enum offs_access offs_access_of(struct file *file);
int offs_open_access(struct file *file, enum offs_access need);
struct pid_namespace *offs_file_pid_ns(struct file *file);
struct cgroup_namespace *offs_current_cgroup_ns(void);
void offs_seq_escaped(struct seq_file *m, const char *s, size_t max);

extern const struct proc_ops offs_stacks_fops;
extern const struct proc_ops offs_drain_fops;
extern const struct proc_ops offs_session_fops;
extern const struct proc_ops offs_threads_fops;

#endif /* OFFS_PROCFS_H */
