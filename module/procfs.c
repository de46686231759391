// SPDX-License-Identifier: GPL-2.0
/*
 * procfs.c - /proc/offsample: with proc_stacks.c and proc_threads.c, the
 * only code that prints.
 *
 *   stacks   the current generation, one record per line (docs/FORMAT.md)
 *   drain    same format; opening it starts a new generation, atomically
 *   threads  every thread right now, FreeBSD "procstat -ka" columns
 *   stats    sampler health and cost, "name value" lines
 *   control  write "reset" to discard the current generation
 *   session  a consumer of its own: its window of samples at its own
 *            rate, key and filter (session.c), read like drain
 *
 * The stacks and drain files are proc_stacks.c's, threads is
 * proc_threads.c's; this file creates them all, decides access, and serves
 * stats and control.
 *
 * Access is decided at open, with the opener's credentials: reading needs
 * CAP_SYS_ADMIN in the initial user namespace, as /proc/PID/stack does
 * (root in a container or in a user namespace is not enough).  The group
 * parameter (at load time) lets one group read stacks, threads and stats
 * in a reduced view without user addresses (docs/SECURITY.md); draining
 * and control stay with CAP_SYS_ADMIN.  Kernel addresses are never
 * printed, only symbols.  Pids are those of the pid namespace of the /proc
 * mount the file was opened through, cgroup paths are relative to the
 * opener's cgroup namespace.  Large outputs stream through seq_file one
 * page at a time.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/cred.h>
#include <linux/uidgid.h>
#include <linux/capability.h>
#include <linux/user_namespace.h>
#include <linux/cgroup.h>
#include <linux/nsproxy.h>

#include "offsample.h"
#include "stats.h"
#include "table.h"
#include "procfs.h"

#define OFFS_PROC_DIR	"offsample"

static struct proc_dir_entry *offs_proc_dir;
/* Set by the group parameter at load time, before the files exist. */
static kgid_t offs_read_gid = INVALID_GID;

/*
 * Who opened file.  Called from ->open, which runs in the opener's context
 * with file->f_cred set to the opener's credentials, so the decision can
 * never be borrowed by handing the descriptor to someone else (the
 * opposite, handing an admin's descriptor on, is like handing on an open
 * /proc/PID/stack).  Readable files are 0440 root:GROUP (root:root
 * without group=), so the VFS has already required uid 0 or the group;
 * uid 0 alone is not enough here.  A group member is asked without audit:
 * lacking CAP_SYS_ADMIN denies it nothing.
 *
 * The group view is given only through a /proc of the initial pid
 * namespace.  Anyone with CAP_SETGID can join the group, among them root
 * in a container run with a typical capability set (Docker's includes
 * it); such a container has a pid namespace of its own, and its /proc
 * shows our files too.  It gets nothing, as it would without group=;
 * neither does a reader in another pid namespace that opens through the
 * host's /proc (bind-mounted into a container).
 */
enum offs_access offs_access_of(struct file *file)
{
	kgid_t gid = READ_ONCE(offs_read_gid);

	if (gid_valid(gid) && in_group_p(gid)) {
		if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
			return OFFS_ACC_ADMIN;
		/* Nor a container that bind-mounts the host's /proc. */
		return proc_pid_ns(file_inode(file)->i_sb) == &init_pid_ns &&
		       task_active_pid_ns(current) == &init_pid_ns ?
		       OFFS_ACC_GROUP : OFFS_ACC_NONE;
	}
	if (file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN))
		return OFFS_ACC_ADMIN;
	return OFFS_ACC_NONE;
}

/* Open-time gate: returns the access, or -EACCES (counted). */
int offs_open_access(struct file *file, enum offs_access need)
{
	enum offs_access acc = offs_access_of(file);

	if (acc < need) {
		atomic64_inc(&offs_stats.open_denied);
		return -EACCES;
	}
	return acc;
}

/* The pid namespace of the /proc mount a file was opened through. */
struct pid_namespace *offs_file_pid_ns(struct file *file)
{
	return get_pid_ns(proc_pid_ns(file_inode(file)->i_sb));
}

/* The opener's cgroup namespace (called from ->open), with a reference. */
struct cgroup_namespace *offs_current_cgroup_ns(void)
{
	struct cgroup_namespace *ns = current->nsproxy->cgroup_ns;

	get_cgroup_ns(ns);
	return ns;
}

/*
 * Load-time only (the parameter is read-only in sysfs): /proc copies an
 * entry's owner into its inode when the inode is created, so a later
 * change would not reach files already looked up.
 */
int offs_procfs_set_group(kgid_t gid)
{
	WRITE_ONCE(offs_read_gid, gid);
	return 0;
}

kgid_t offs_procfs_group(void)
{
	return READ_ONCE(offs_read_gid);
}

/* Bytes that would break a TAB-separated, ';'-joined line are escaped. */
void offs_seq_escaped(struct seq_file *m, const char *s, size_t max)
{
	size_t i;
	unsigned char c;

	for (i = 0; i < max && s[i]; i++) {
		c = s[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || c == ';')
			seq_printf(m, "\\x%02x", c);
		else
			seq_putc(m, c);
	}
}

/* ---- stats ---- */

static int offs_stats_open(struct inode *inode, struct file *file)
{
	int acc = offs_open_access(file, OFFS_ACC_GROUP);

	if (acc < 0)
		return acc;
	return single_open(file, offs_stats_show, NULL);
}

static const struct proc_ops offs_stats_fops = {
	.proc_open = offs_stats_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/* ---- control ---- */

static ssize_t offs_control_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	char buf[16];
	struct offs_gen *gen;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	if (strcmp(buf, "reset"))
		return -EINVAL;
	gen = offs_table_swap(false);
	if (IS_ERR(gen))
		return PTR_ERR(gen);
	atomic64_inc(&offs_stats.resets);
	return len;
}

/* CAP_SYS_ADMIN only (the mode, 0200 root, lets any uid 0 open). */
static int offs_control_open(struct inode *inode, struct file *file)
{
	if (offs_access_of(file) != OFFS_ACC_ADMIN) {
		atomic64_inc(&offs_stats.open_denied);
		return -EPERM;
	}
	return nonseekable_open(inode, file);
}

static const struct proc_ops offs_control_fops = {
	.proc_open = offs_control_open,
	.proc_write = offs_control_write,
};

/* ---- setup ---- */

int offs_procfs_init(void)
{
	/* group= readers may read these; drain and control are root's. */
	static const struct {
		const char *name;
		umode_t mode;
		const struct proc_ops *fops;
	} files[] = {
		{ "stacks", 0440, &offs_stacks_fops },
		{ "threads", 0440, &offs_threads_fops },
		{ "stats", 0440, &offs_stats_fops },
		/* Written to for its settings (session.c). */
		{ "session", 0660, &offs_session_fops },
	};
	struct proc_dir_entry *pde;
	unsigned int i;

	offs_proc_dir = proc_mkdir(OFFS_PROC_DIR, NULL);
	if (!offs_proc_dir)
		return -ENOMEM;
	if (!proc_create("control", 0200, offs_proc_dir, &offs_control_fops))
		goto err;
	if (!proc_create("drain", 0400, offs_proc_dir, &offs_drain_fops))
		goto err;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		pde = proc_create(files[i].name, files[i].mode, offs_proc_dir,
				  files[i].fops);
		if (!pde)
			goto err;
		/* No inode exists yet: the owner applies to all of them. */
		if (gid_valid(offs_read_gid))
			proc_set_user(pde, GLOBAL_ROOT_UID, offs_read_gid);
	}
	return 0;
err:
	proc_remove(offs_proc_dir);
	return -ENOMEM;
}

/*
 * Waits for readers inside our file operations and runs ->release for
 * files still open, so nothing of ours runs after this returns.
 */
void offs_procfs_exit(void)
{
	proc_remove(offs_proc_dir);
}
