// SPDX-License-Identifier: GPL-2.0
/*
 * cfi-fuzz - hostile input for module/ucfi.c, compiled for user space with
 * AddressSanitizer and UndefinedBehaviorSanitizer (tests/host/ucfi.bats).
 *
 *   cfi-fuzz FILE INPUTS SEED
 *
 * Each input is FILE with a few mutations: random bytes, boundary values
 * (0, 1, 0x7f, 0x80, 0xff.., lengths of 0xffffffff) written over the
 * .eh_frame and .eh_frame_hdr bytes or the ELF and program headers, or the
 * file cut short.  The compiler must return a table or an error for every
 * one of them; the sanitizers turn any out-of-bounds access, overflow or
 * leak into a failure, and an input that makes it interpret more than its
 * work bound allows (ucfi.h: OFFS_CFI_WORK_FACTOR times the .eh_frame
 * plus OFFS_CFI_WORK_SLACK, plus the one record that crossed it) is one
 * too (exit 3).  Prints "inputs N built B refused R over O maxwork W",
 * O the inputs stopped by the work bound, W the most bytes interpreted
 * per byte of .eh_frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../module/ucfi.c"

struct mem_src {
	const u8 *data;
	u64 size;
};

static int mem_read(void *ctx, u64 off, void *buf, size_t len)
{
	struct mem_src *m = ctx;

	if (off > m->size || len > m->size - off)
		return -EINVAL;
	memcpy(buf, m->data + off, len);
	return 0;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned long long rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	static const u32 vals[] = { 0, 1, 4, 8, 0x7f, 0x80, 0xff, 0xffff,
				    0x7fffffff, 0x80000000, 0xfffffff0,
				    0xffffffff };
	unsigned long n, i, built = 0, refused = 0, over = 0;
	struct offs_cfi_work work;
	double maxwork = 0;
	struct offs_cfi_table *t;
	struct mem_src m;
	struct offs_cfi_src src = { .read = mem_read, .ctx = &m };
	struct offs_elf elf, ielf;
	u8 *orig, *buf;
	long size;
	FILE *f;
	int k, nmut, err;

	if (argc != 4) {
		fprintf(stderr, "usage: cfi-fuzz FILE INPUTS SEED\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	rng ^= strtoull(argv[3], NULL, 10) * 0x2545f4914f6cdd1dULL;
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0) {
		perror(argv[1]);
		return 2;
	}
	rewind(f);
	orig = malloc(size);
	buf = malloc(size);
	if (!orig || !buf || fread(orig, 1, size, f) != (size_t)size)
		return 2;
	fclose(f);
	m.data = orig;
	m.size = size;
	src.size = size;
	if (offs_find_eh_frame(&src, &elf)) {
		fprintf(stderr, "cfi-fuzz: %s has no .eh_frame\n", argv[1]);
		return 2;
	}
	for (i = 0; i < n; i++) {
		memcpy(buf, orig, size);
		m.data = buf;
		m.size = size;
		nmut = 1 + rnd() % 8;
		for (k = 0; k < nmut; k++) {
			u64 off, span;

			switch (rnd() % 4) {
			case 0:		/* ELF and program headers */
				span = 64 + 56 * 16;
				off = rnd() % span;
				break;
			default:	/* .eh_frame */
				span = elf.eh_len ? elf.eh_len : 1;
				off = elf.eh_off + rnd() % span;
				break;
			}
			if (off + 4 > (u64)size)
				continue;
			if (rnd() % 2) {
				buf[off] = rnd();
			} else {
				u32 v = vals[rnd() % (sizeof(vals) / sizeof(vals[0]))];

				memcpy(buf + off, &v, 4);
			}
		}
		if (rnd() % 16 == 0)
			m.size = rnd() % size;
		src.size = m.size;
		err = offs_cfi_build(&src, &t, &work);
		over += work.over;
		/* The .eh_frame this input has, as the compiler found it. */
		if (offs_find_eh_frame(&src, &ielf) == 0 && ielf.eh_len) {
			if (work.bytes > ielf.eh_len * (OFFS_CFI_WORK_FACTOR + 1) +
					 OFFS_CFI_WORK_SLACK) {
				fprintf(stderr, "cfi-fuzz: input %lu: %llu bytes interpreted for %llu of .eh_frame\n",
					i, (unsigned long long)work.bytes,
					(unsigned long long)ielf.eh_len);
				return 3;
			}
			if ((double)work.bytes / ielf.eh_len > maxwork)
				maxwork = (double)work.bytes / ielf.eh_len;
		}
		if (err) {
			refused++;
			continue;
		}
		/* Every row is usable: lookups of its edges work. */
		if (t->nrows) {
			offs_cfi_lookup(t, t->pcs[0]);
			offs_cfi_lookup(t, t->pcs[t->nrows - 1]);
		}
		built++;
		offs_cfi_free(t);
	}
	printf("inputs %lu built %lu refused %lu over %lu maxwork %.2f\n",
	       n, built, refused, over, maxwork);
	free(orig);
	free(buf);
	return 0;
}
