/* SPDX-License-Identifier: GPL-2.0 */
/*
 * params.h - the module parameters (params.c), what the size parameters
 * may reserve on this machine, and the configuration sequence the thread
 * cache checks captures against.
 */
#ifndef OFFS_PARAMS_H
#define OFFS_PARAMS_H

#include <linux/types.h>

/* The parameters, read with READ_ONCE() by everyone but their setters. */
extern unsigned int offs_hz;
extern unsigned int offs_max_stacks;
extern unsigned int offs_max_depth;
extern bool offs_enabled;
extern bool offs_kthreads;
extern unsigned int offs_key_fields;
extern unsigned int offs_thread_cache;
extern bool offs_user_stacks;
extern bool offs_python_stacks;
extern unsigned int offs_max_user_depth;
extern unsigned int offs_max_retired;
extern unsigned int offs_threads_rate;
extern bool offs_blockers;
extern bool offs_kstack_cache;
extern bool offs_oncpu;
extern unsigned int offs_critical_pct;
extern unsigned int offs_cfi_cache_mb;
extern unsigned int offs_cfi_build_ms;

/*
 * Bumped by every parameter write that changes what a capture contains
 * (max_depth, max_user_depth, key, cgroup, cfi_cache_mb and the switches
 * kthreads, user_stacks, blockers, kstack_cache, oncpu): the thread cache
 * serves only captures taken under the current value.
 */
extern unsigned int offs_config_seq;
void offs_config_changed(void);
int offs_parse_key(const char *val, unsigned int *fields);
extern unsigned int offs_max_sessions;

#define OFFS_MAX_DEPTH_LIMIT	128

/* What a size parameter may reserve, from the machine's RAM. */
unsigned int offs_max_stacks_limit(void);
unsigned int offs_thread_cache_limit(void);
unsigned int offs_cfi_cache_limit(void);

/* offs_init() and offs_exit() (main.c). */
void offs_params_clamp_defaults(void);
void offs_params_live(void);
void offs_params_dead(void);

#endif /* OFFS_PARAMS_H */
