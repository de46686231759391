/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session.h - consumers that never disturb each other (session.c): each
 * open /proc/offsample/session counts its own window of samples, at its
 * own rate, key and filter, without changing what anyone else sees.
 */
#ifndef OFFS_SESSION_H
#define OFFS_SESSION_H

#include <linux/types.h>

struct cgroup;
struct offs_gen;
struct pid_namespace;
struct task_struct;

struct offs_session {
	int slot;			/* index in offs_sessions[] */
	/*
	 * The window being counted, and the settings.  Changed only under
	 * offs_tick_lock and offs_table_lock together (table.c), so the
	 * sampler, which holds offs_tick_lock for a whole tick, reads them
	 * without offs_table_lock.
	 */
	struct offs_gen *gen;
	unsigned int hz;		/* 1..1000 */
	unsigned int key_fields;	/* OFFS_KEY_* */
	struct cgroup *cg;		/* only this subtree, or NULL */
	struct pid *pid;		/* only this process (reference), or NULL */
	u64 due;			/* next tick it is due (offs_sess_select()) */
};

/*
 * The open sessions, by slot.  Written under offs_tick_lock and
 * offs_table_lock (offs_table_sess_set()); the sampler reads it during a
 * tick (it holds offs_tick_lock), everyone else under offs_table_lock.
 */
extern struct offs_session *offs_sessions[OFFS_SESSIONS_MAX];

/* When the sampler must tick next (monotonic ns), U64_MAX: no consumer. */
u64 offs_sess_next_due(void);
void offs_sess_restart(void);
/* Tick start (offs_tick_lock held): which consumers this tick counts for. */
unsigned int offs_sess_select(u64 now, bool *late);
/* The key fields of every open consumer, together (offs_tick_lock held). */
unsigned int offs_sess_keys(void);
/* Which of the selected sessions (sel) want thread t (under RCU). */
unsigned int offs_sess_match(struct task_struct *t, unsigned int sel);

unsigned int offs_sess_count_open(void);
struct offs_session *offs_sess_open(bool restricted);
int offs_sess_configure(struct offs_session *se, char *settings,
			struct pid_namespace *pidns, bool restricted);
struct offs_gen *offs_sess_window(struct offs_session *se);
void offs_sess_close(struct offs_session *se);

#endif /* OFFS_SESSION_H */
