// SPDX-License-Identifier: GPL-2.0
/*
 * symcache.c - return address -> "func+0xoff/0xsize [module]", read side.
 *
 * The sampler never symbolizes.  Readers format each address through this
 * cache: a sorted array searched by binary search, plus a small sorted
 * "pending" array that new entries go to and that is merged into the main
 * array when it fills up, so inserting N addresses costs O(N log N) moves
 * rather than O(N^2).  The cache is shared by all readers and survives
 * between reads; a kallsyms lookup happens once per distinct address.
 *
 * Addresses in a module that goes away may be reused by the next module
 * loaded, so the cache (and the classifier's) is flushed on module unload.
 *
 * Locking: offs_sym_sem, a rw_semaphore (readers are processes in read(2)
 * and may sleep).  kallsyms is called without it held.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/kallsyms.h>

#include "offsample.h"
#include "stats.h"
#include "classify.h"
#include "symcache.h"

#define OFFS_SYM_PENDING	256

struct offs_sym {
	unsigned long addr;
	char *str;
};

static DECLARE_RWSEM(offs_sym_sem);
static struct offs_sym *offs_sym_main;
static unsigned int offs_sym_main_n;
static struct offs_sym offs_sym_pend[OFFS_SYM_PENDING];
static unsigned int offs_sym_pend_n;

/* Index of the first entry >= addr. */
static unsigned int offs_sym_lower(const struct offs_sym *a, unsigned int n,
				   unsigned long addr)
{
	unsigned int lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const char *offs_sym_find(unsigned long addr)
{
	unsigned int i;

	i = offs_sym_lower(offs_sym_main, offs_sym_main_n, addr);
	if (i < offs_sym_main_n && offs_sym_main[i].addr == addr)
		return offs_sym_main[i].str;
	i = offs_sym_lower(offs_sym_pend, offs_sym_pend_n, addr);
	if (i < offs_sym_pend_n && offs_sym_pend[i].addr == addr)
		return offs_sym_pend[i].str;
	return NULL;
}

static void offs_sym_free_str(char *str)
{
	atomic64_sub(offs_ksize(strlen(str) + 1), &offs_stats.memory_bytes);
	kfree(str);
}

/* Write lock held.  Empty the whole cache. */
static void offs_sym_clear(void)
{
	unsigned int i;

	for (i = 0; i < offs_sym_main_n; i++)
		offs_sym_free_str(offs_sym_main[i].str);
	for (i = 0; i < offs_sym_pend_n; i++)
		offs_sym_free_str(offs_sym_pend[i].str);
	if (offs_sym_main)
		atomic64_sub(offs_sym_main_n * sizeof(*offs_sym_main),
			     &offs_stats.memory_bytes);
	kvfree(offs_sym_main);
	offs_sym_main = NULL;
	offs_sym_main_n = 0;
	offs_sym_pend_n = 0;
}

/* Write lock held.  Merge pending into main; false if out of memory. */
static bool offs_sym_merge(void)
{
	unsigned int n = offs_sym_main_n + offs_sym_pend_n;
	unsigned int i = 0, j = 0, k = 0;
	struct offs_sym *m;

	m = kvmalloc_array(n, sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return false;
	while (i < offs_sym_main_n || j < offs_sym_pend_n) {
		if (j == offs_sym_pend_n ||
		    (i < offs_sym_main_n &&
		     offs_sym_main[i].addr < offs_sym_pend[j].addr))
			m[k++] = offs_sym_main[i++];
		else
			m[k++] = offs_sym_pend[j++];
	}
	if (offs_sym_main)
		atomic64_sub(offs_sym_main_n * sizeof(*m), &offs_stats.memory_bytes);
	kvfree(offs_sym_main);
	offs_sym_main = m;
	offs_sym_main_n = n;
	offs_sym_pend_n = 0;
	atomic64_add(n * sizeof(*m), &offs_stats.memory_bytes);
	return true;
}

/* Write lock held.  Takes ownership of str (frees it on failure). */
static void offs_sym_insert(unsigned long addr, char *str)
{
	unsigned int i;

	if (offs_sym_find(addr)) {
		offs_sym_free_str(str);
		return;
	}
	if (offs_sym_main_n + offs_sym_pend_n >= OFFS_SYM_MAX) {
		offs_sym_clear();
		atomic64_inc(&offs_stats.sym_flushes);
	}
	if (offs_sym_pend_n == OFFS_SYM_PENDING && !offs_sym_merge()) {
		offs_sym_free_str(str);
		return;
	}
	i = offs_sym_lower(offs_sym_pend, offs_sym_pend_n, addr);
	memmove(&offs_sym_pend[i + 1], &offs_sym_pend[i],
		(offs_sym_pend_n - i) * sizeof(offs_sym_pend[0]));
	offs_sym_pend[i].addr = addr;
	offs_sym_pend[i].str = str;
	offs_sym_pend_n++;
}

/*
 * Format a kernel return address as /proc/PID/stack does (%pB: the symbol
 * of addr - 1, offset of addr), or "[unknown]" when no symbol covers it:
 * raw kernel addresses are never printed.  Returns the length written.
 */
int offs_sym_format(unsigned long addr, char *buf, size_t len)
{
	char tmp[KSYM_SYMBOL_LEN];
	const char *hit;
	char *str;
	int n;

	atomic64_inc(&offs_stats.sym_lookups);
	down_read(&offs_sym_sem);
	hit = offs_sym_find(addr);
	if (hit) {
		n = strscpy(buf, hit, len);
		up_read(&offs_sym_sem);
		atomic64_inc(&offs_stats.sym_hits);
		return n < 0 ? len - 1 : n;
	}
	up_read(&offs_sym_sem);

	snprintf(tmp, sizeof(tmp), "%pB", (void *)addr);
	if (!strncmp(tmp, "0x", 2) || tmp[0] == '\0')
		strscpy(tmp, "[unknown]", sizeof(tmp));
	n = strscpy(buf, tmp, len);

	/* A reader's read(2) causes it: charged to the reader. */
	str = kstrdup(tmp, GFP_KERNEL_ACCOUNT);
	if (str) {
		atomic64_add(offs_ksize(strlen(str) + 1), &offs_stats.memory_bytes);
		down_write(&offs_sym_sem);
		offs_sym_insert(addr, str);
		up_write(&offs_sym_sem);
	}
	return n < 0 ? len - 1 : n;
}

/*
 * The same for an instruction address (the leaf of an on-CPU stack, where
 * the thread was interrupted): the symbol of addr itself (%pS), which
 * %pB would miss when addr is a function's first byte.  Not cached: one
 * per record, and the cache is keyed by return addresses.
 */
int offs_sym_format_pc(unsigned long addr, char *buf, size_t len)
{
	int n;

	snprintf(buf, len, "%pS", (void *)addr);
	if (!strncmp(buf, "0x", 2) || buf[0] == '\0')
		strscpy(buf, "[unknown]", len);
	n = strlen(buf);
	return n;
}

unsigned int offs_symcache_entries(void)
{
	return READ_ONCE(offs_sym_main_n) + READ_ONCE(offs_sym_pend_n);
}

void offs_symcache_flush(void)
{
	down_write(&offs_sym_sem);
	offs_sym_clear();
	up_write(&offs_sym_sem);
}

/* Process context (module load/unload path); may sleep. */
static int offs_module_event(struct notifier_block *nb, unsigned long action,
			     void *data)
{
	if (action == MODULE_STATE_GOING) {
		offs_symcache_flush();
		offs_classify_flush();
		atomic64_inc(&offs_stats.sym_flushes);
	}
	return NOTIFY_DONE;
}

static struct notifier_block offs_module_nb = {
	.notifier_call = offs_module_event,
};

int offs_symcache_init(void)
{
	return register_module_notifier(&offs_module_nb);
}

void offs_symcache_exit(void)
{
	unregister_module_notifier(&offs_module_nb);
	offs_symcache_flush();
}
