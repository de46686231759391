/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_TABLE_H
#define OFFS_TABLE_H

#include "offsample.h"
#include "blocker.h"

extern struct mutex offs_table_lock;

int offs_table_init(void);
void offs_table_exit(void);

/*
 * What the thread cache keeps about a thread's last sample, so that an
 * unchanged thread is counted again without unwinding (threadcache.c).
 */
struct offs_hit {
	struct offs_stack *stack;	/* reference held, or NULL */
	struct offs_ustack *ustack;	/* reference held, or NULL */
	struct offs_wobj *wobj;		/* reference held, or NULL */
	long syscall;
	u64 cgid;
	struct offs_rec *rec;		/* valid while gen_seq is current */
	u64 gen_seq;
	unsigned int key_fields;
	struct offs_fxwait fx;		/* set by offs_tc_store() */
	u8 reason;
	char state_ch;
};

enum offs_reason offs_table_record(struct offs_sample *s,
				   struct offs_hit *hit);
struct offs_rec *offs_table_record_again(struct offs_sample *s,
					 struct offs_hit *hit);
u64 offs_table_gen_seq(void);
void offs_table_fold(struct offs_rec * const *recs, unsigned int n);
void offs_table_unpend(struct offs_rec * const *recs, unsigned int n);
struct offs_edge_key;
bool offs_table_count_edge(struct offs_gen *gen,
			   const struct offs_edge_key *key);
void offs_table_hit_release(struct offs_hit *hit);
unsigned int offs_table_tick_begin(u64 now, bool *late);
struct cgroup;
struct offs_session;
struct offs_gen *offs_table_sess_gen(void);
int offs_table_sess_add(struct offs_session *se, struct offs_gen *gen,
			bool restricted);
struct pid;
int offs_table_sess_settings(struct offs_session *se, struct offs_gen *gen,
			     unsigned int hz, unsigned int key_fields,
			     struct pid **pid, struct cgroup **cg);
struct offs_gen *offs_table_sess_swap(struct offs_session *se,
				      struct offs_gen *gen);
struct offs_gen *offs_table_sess_remove(struct offs_session *se,
					struct cgroup **cg, struct pid **pid);
void offs_table_tick_end(void);
int offs_table_quiesce(void);
struct offs_gen *offs_table_get_current(void);
struct offs_gen *offs_table_get_current_group(void);
void offs_table_put_group(struct offs_gen *gen);
struct offs_gen *offs_table_swap(bool keep);
void offs_gen_put(struct offs_gen *gen);
u64 offs_table_unit_cost(unsigned int retired);
unsigned int offs_table_nstacks(void);
unsigned int offs_table_retired(void);
unsigned int offs_table_retired_group(void);

/* Reader-side iteration over one generation, in insertion order. */
struct offs_gen_iter {
	struct offs_gen *gen;		/* reference held by the reader */
	struct offs_rec *rec;		/* current record */
	loff_t pos;			/* its index */
	u64 count;			/* its count when positioned */
	struct offs_edge *edge;		/* current edge (offs_gen_edge_seek) */
	loff_t epos;
};

/* An edge as a reader prints it (blocker.h has the key). */
struct offs_edge_out {
	struct offs_edge_key key;
	u64 count;
	unsigned int wrec_id;		/* record ids, 0: none */
	unsigned int hrec_id;
};

bool offs_gen_edge_seek(struct offs_gen_iter *it, loff_t pos,
			struct offs_edge_out *out);

bool offs_gen_iter_seek(struct offs_gen_iter *it, loff_t pos);
void offs_gen_each_rec(struct offs_gen *gen,
		       void (*fn)(struct offs_rec *rec, void *arg), void *arg);

struct offs_gen_summary {
	u64 seq;
	u64 start_real_ns;
	u64 end_real_ns;
	u64 duration_ns;
	bool live;
	u64 ticks;
	u64 samples;
	u64 dropped;
	unsigned int nrecs;
	unsigned int nedges;
	u64 dropped_reason[OFFS_R_NR];
};

void offs_gen_summary(struct offs_gen *gen, struct offs_gen_summary *sum);
void offs_cur_summary(struct offs_gen_summary *sum);

/*
 * Can hit's record take one more sample of a thread with these names and
 * cgroup: it is of generation gen_seq (the current one), made under
 * key_fields (the current ones), and the names and cgroup are those it was
 * counted under?  offs_table_record_again() and the sampler's walk
 * (offs_table_again_fast()) decide alike with it.
 */
static inline bool offs_hit_fits(const struct offs_hit *hit, u64 gen_seq,
				 unsigned int key_fields, u64 cgid,
				 const char *comm, const char *tname)
{
	const struct offs_rec *rec = hit->rec;

	return rec && hit->gen_seq == gen_seq &&
	       hit->key_fields == key_fields && hit->cgid == cgid &&
	       offs_comm_eq(rec->comm, comm) &&
	       (!rec->tname[0] || offs_comm_eq(rec->tname, tname));
}

/*
 * The sampler's RCU walk (threadcache.c, offs_tc_walk_hit()): count one more
 * sample of a thread the thread cache found unchanged, without
 * offs_table_lock, if its record can take it as it is: the record is of
 * the current generation (gen_seq, offs_table_gen_seq() at the start of
 * the tick), and the thread's names, cgroup and the key fields are those
 * it was counted under.  Otherwise NULL: offs_table_record_again() does it
 * after the walk.  The sample goes to rec->pending; *first is set when
 * rec had none yet in this tick, so that the caller lists it for
 * offs_table_fold().
 *
 * No lock is needed: the sampler holds offs_tick_lock for the whole tick,
 * and offs_table_swap() takes it before it replaces offs_cur, so the
 * current generation and its records stay as they are until the tick
 * ends.  A record's names and keys never change; only the sampler writes
 * pending.  Under rcu_read_lock() (t's group leader and css_set); nothing
 * here sleeps.
 */
static inline struct offs_rec *
offs_table_again_fast(struct task_struct *t, const struct offs_hit *hit,
		      u64 gen_seq, unsigned int key_fields, bool *first)
{
	struct offs_rec *rec = hit->rec;

	if (!offs_hit_fits(hit, gen_seq, key_fields, offs_task_cgid_rcu(t),
			   READ_ONCE(t->group_leader)->comm, t->comm))
		return NULL;
	*first = !rec->pending++;
	return rec;
}

#endif /* OFFS_TABLE_H */
