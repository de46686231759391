/* SPDX-License-Identifier: GPL-2.0 */
/*
 * intern.c: hash-consed objects (user stacks, paths, wait objects): one
 * copy of each distinct value, shared by reference count.  Everything but
 * offs_istore_count() and offs_istore_bytes() (statistics) runs under
 * offs_table_lock.
 *
 * An interned type starts with struct offs_interned and has a store of its
 * own; it compares its values itself while it walks a bucket:
 *
 *	hlist_for_each_entry(x, offs_istore_bucket(&store, hash), base.node)
 *		if (x->base.hash == hash && <same value>) {
 *			offs_interned_get(&x->base);
 *			return x;
 *		}
 *	x = offs_istore_alloc(&store, bytes);
 *	... fill in the value ...
 *	offs_istore_add(&store, &x->base, hash, bytes);
 */
#ifndef OFFS_INTERN_H
#define OFFS_INTERN_H

#include <linux/types.h>
#include <linux/list.h>

struct offs_interned {
	struct hlist_node node;
	u32 hash;
	unsigned int refs;
};

struct offs_istore {
	struct hlist_head *buckets;
	unsigned int nbuckets;
	unsigned int n;			/* objects in the store */
	u64 bytes;			/* what they take, as allocated */
};

struct hlist_head *offs_istore_bucket(struct offs_istore *st, u32 hash);
void *offs_istore_alloc(struct offs_istore *st, size_t bytes);
void offs_istore_add(struct offs_istore *st, struct offs_interned *o,
		     u32 hash, size_t bytes);
void offs_istore_free(struct offs_istore *st, struct offs_interned *o,
		      size_t bytes);
unsigned int offs_istore_count(const struct offs_istore *st);
u64 offs_istore_bytes(const struct offs_istore *st);
void offs_interned_get(struct offs_interned *o);
bool offs_interned_unref(struct offs_interned *o);

#endif /* OFFS_INTERN_H */
