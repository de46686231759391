/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hash.h - the hash of the sampler's per-capture keys: arrays of words
 * (kernel and user stacks of addresses, a record's key).
 *
 * jhash() reads bytes, 12 at a time, in about 3 instructions a byte: a
 * fifth of a cold capture went to it (make bench BENCH_MODE=icount,
 * issue 52).  This takes a word at a time in about 6 instructions with
 * its loop: xor it in, multiply by an odd constant (the product's high
 * bits depend on every bit of the word), rotate the high bits down for
 * the next word; then one final mix folds the high half into the low bits
 * the tables index with.
 * For hash tables only: every lookup still compares the whole key, so a
 * collision costs a comparison and nothing else.  Crafted collisions are
 * not kept out (neither were they with jhash and a fixed seed); the seed
 * is random per load only so that one load's layout says nothing of the
 * next.
 */
#ifndef OFFS_HASH_H
#define OFFS_HASH_H

#include <linux/types.h>
#include <linux/bitops.h>

#define OFFS_HASH_MUL	0x9e3779b97f4a7c15ULL	/* 2^64 / golden ratio, odd */
#define OFFS_HASH_FIN	0xff51afd7ed558ccdULL	/* a 64-bit finaliser's */

extern u64 offs_hash_seed;

/* n words from w, with tweak (a few flags and counts) mixed in first. */
static inline u32 offs_hash_words(const unsigned long *w, unsigned int n,
				  u64 tweak)
{
	u64 h = (offs_hash_seed ^ tweak) * OFFS_HASH_MUL;
	unsigned int i;

	for (i = 0; i < n; i++)
		h = rol64((h ^ w[i]) * OFFS_HASH_MUL, 29);
	h ^= h >> 32;
	h *= OFFS_HASH_FIN;
	return (u32)(h ^ (h >> 32));
}

void offs_hash_init(void);

#endif /* OFFS_HASH_H */
