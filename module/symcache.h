/* SPDX-License-Identifier: GPL-2.0 */
/* symcache.c: kernel return addresses to "func+0xoff/0xsize [mod]". */
#ifndef OFFS_SYMCACHE_H
#define OFFS_SYMCACHE_H

#include <linux/types.h>

/* Entries kept at most (then the cache is emptied and refilled). */
#define OFFS_SYM_MAX		65536

int offs_symcache_init(void);
void offs_symcache_exit(void);
void offs_symcache_flush(void);
int offs_sym_format(unsigned long addr, char *buf, size_t len);
int offs_sym_format_pc(unsigned long addr, char *buf, size_t len);
unsigned int offs_symcache_entries(void);

#endif /* OFFS_SYMCACHE_H */
