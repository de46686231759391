// SPDX-License-Identifier: GPL-2.0
/*
 * hash.c - the seed of offs_hash_words() (hash.h), drawn once per load
 * before the sampler starts; read-only from then on.
 */
#include <linux/random.h>
#include <linux/cache.h>

#include "hash.h"

u64 offs_hash_seed __read_mostly;

void offs_hash_init(void)
{
	offs_hash_seed = get_random_u64();
}
