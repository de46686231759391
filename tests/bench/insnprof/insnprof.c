// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof - a QEMU TCG plugin for make bench (tests/bench/insnprof.sh):
 * guest instructions executed per translation block, between two marks.
 *
 *   qemu-system-x86_64 ... -icount shift=0 \
 *       -plugin tests/bench/insnprof/insnprof.so,out=PREFIX
 *
 * Every translated block gets an inline counter of its executions (one
 * vCPU: the adds need no atomicity); instructions = executions x the
 * block's length.  A mark is the guest executing the block at MARK_VADDR,
 * a user page that tests/bench/insnprof/mark.c maps and calls: the first
 * mark zeroes every counter, each later one writes PREFIX.N ("vaddr
 * instructions" per block start with any, in hex and decimal) and zeroes
 * them again.  The guest's kernel symbols map the addresses to functions
 * (insnprof.sh), interrupts-off code included, which a perf profile in
 * the guest cannot see.  A block that an interrupt or fault leaves early
 * is counted whole: a small overcount.
 *
 * Written against the plugin API of QEMU 7.2 (Debian 12), API version 1;
 * the declarations below are that API's, which the QEMU binary exports.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mark.h"

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *udata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/*
 * One per translation: a block translated again (its page was written,
 * the code cache flushed) gets another; the dump adds them up by address.
 * Kept in chunks that never move (the inline ops point into them).
 */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;
};

#define CHUNK	65536
static struct block **chunks;
static size_t nchunks, nblocks;
static const char *prefix = "insnprof";
static unsigned int marks;

static struct block *block_new(void)
{
	if (nblocks == nchunks * CHUNK) {
		chunks = realloc(chunks, (nchunks + 1) * sizeof(*chunks));
		if (!chunks)
			abort();
		chunks[nchunks] = calloc(CHUNK, sizeof(struct block));
		if (!chunks[nchunks])
			abort();
		nchunks++;
	}
	nblocks++;
	return &chunks[(nblocks - 1) / CHUNK][(nblocks - 1) % CHUNK];
}

#define B(i)	(chunks[(i) / CHUNK][(i) % CHUNK])

static int by_vaddr(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Write the counts since the last mark (summed by address) and zero them. */
static void dump(void)
{
	struct block *v = malloc((nblocks + 1) * sizeof(*v));
	char path[4096];
	size_t i, n = 0;
	FILE *f;

	if (!v)
		abort();
	for (i = 0; i < nblocks; i++) {
		if (B(i).execs)
			v[n++] = (struct block){ B(i).vaddr, B(i).insns * B(i).execs, 0 };
		B(i).execs = 0;
	}
	qsort(v, n, sizeof(*v), by_vaddr);
	snprintf(path, sizeof(path), "%s.%u", prefix, marks);
	f = fopen(path, "w");
	if (f) {
		for (i = 0; i < n; i++) {
			uint64_t sum = v[i].insns;

			while (i + 1 < n && v[i + 1].vaddr == v[i].vaddr)
				sum += v[++i].insns;
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", v[i].vaddr, sum);
		}
		fclose(f);
	}
	free(v);
}

static void on_mark(unsigned int vcpu, void *udata)
{
	size_t i;

	(void)vcpu;
	(void)udata;
	if (marks)
		dump();
	else
		for (i = 0; i < nblocks; i++)
			B(i).execs = 0;
	marks++;
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = block_new();

	(void)id;
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
	if (b->vaddr == MARK_VADDR)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			prefix = argv[i] + 4;
		else {
			fprintf(stderr, "insnprof: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	return 0;
}
