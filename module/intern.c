// SPDX-License-Identifier: GPL-2.0
/*
 * intern.c - the store behind every hash-consed object (intern.h): the
 * bound (max_stacks objects per store), the memory they are charged, and
 * their reference counts.  offs_table_lock is held for all of it: the
 * sampler interns, readers and generations drop references.
 */
#include <linux/slab.h>
#include <linux/lockdep.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "intern.h"

struct hlist_head *offs_istore_bucket(struct offs_istore *st, u32 hash)
{
	lockdep_assert_held(&offs_table_lock);
	return &st->buckets[hash % st->nbuckets];
}

/*
 * Memory for a new object of bytes, or NULL when the store holds
 * max_stacks objects already or there is none.  The caller holds no lock
 * of a sampled process: reclaim is allowed.
 */
void *offs_istore_alloc(struct offs_istore *st, size_t bytes)
{
	lockdep_assert_held(&offs_table_lock);
	if (st->n >= READ_ONCE(offs_max_stacks))
		return NULL;
	return kmalloc(bytes, GFP_KERNEL | __GFP_NOWARN);
}

/* Add o (bytes, from offs_istore_alloc()) with one reference, the caller's. */
void offs_istore_add(struct offs_istore *st, struct offs_interned *o,
		     u32 hash, size_t bytes)
{
	lockdep_assert_held(&offs_table_lock);
	o->hash = hash;
	o->refs = 1;
	hlist_add_head(&o->node, offs_istore_bucket(st, hash));
	st->n++;
	WRITE_ONCE(st->bytes, st->bytes + offs_ksize(bytes));
	atomic64_add(offs_ksize(bytes), &offs_stats.memory_bytes);
}

/* Remove and free o, whose last reference is gone (offs_interned_unref()). */
void offs_istore_free(struct offs_istore *st, struct offs_interned *o,
		      size_t bytes)
{
	lockdep_assert_held(&offs_table_lock);
	hlist_del(&o->node);
	st->n--;
	WRITE_ONCE(st->bytes, st->bytes - offs_ksize(bytes));
	atomic64_sub(offs_ksize(bytes), &offs_stats.memory_bytes);
	kfree(o);
}

/* Any context: a statistic, read without the lock. */
unsigned int offs_istore_count(const struct offs_istore *st)
{
	return READ_ONCE(st->n);
}

/* Any context: a statistic, read without the lock. */
u64 offs_istore_bytes(const struct offs_istore *st)
{
	return READ_ONCE(st->bytes);
}

void offs_interned_get(struct offs_interned *o)
{
	lockdep_assert_held(&offs_table_lock);
	o->refs++;
}

/* Drop a reference; true if it was the last (then free the object). */
bool offs_interned_unref(struct offs_interned *o)
{
	lockdep_assert_held(&offs_table_lock);
	return !--o->refs;
}
