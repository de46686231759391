// SPDX-License-Identifier: GPL-2.0
/*
 * cfi-dump - module/ucfi.c compiled for user space: compile an ELF file's
 * .eh_frame into offsample's compact table and print it.
 *
 *   cfi-dump FILE          one line per row: ADDRESS RULE
 *   cfi-dump -s FILE       a summary line: rows, rules, bytes
 *   cfi-dump -w FILE       what the build did: bytes interpreted, CIE
 *                          parses, checks (the module's scheduling points),
 *                          whether the work bound stopped it, rule
 *                          lookups and the hash slots they probed; with
 *                          CFI_DUMP_STOP_AFTER=N the N-th check answers
 *                          -ETIME, as the module's does past its budget
 *
 * RULE is "rsp+N BP", "rbp+N BP" (BP: "u" rbp unchanged, "c+N"/"c-N"
 * saved at CFA+N, "?" lost), "plt>=N", "signal", "stop" or "invalid".
 * Used by tests/host/ucfi.bats, which compares it with readelf -wF.
 * Exit status 1 if the table cannot be built (the error is printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../module/ucfi.c"

struct file_src {
	FILE *f;
};

static int file_read(void *ctx, u64 off, void *buf, size_t len)
{
	struct file_src *s = ctx;

	if (fseeko(s->f, (off_t)off, SEEK_SET))
		return -EIO;
	return fread(buf, 1, len, s->f) == len ? 0 : -EINVAL;
}

static unsigned long checks, stop_after;

/* The module lets the scheduler in here; count the calls. */
static int count_check(void *ctx)
{
	(void)ctx;
	checks++;
	return stop_after && checks >= stop_after ? -ETIME : 0;
}

static void print_rule(const struct offs_cfi_rule *r)
{
	switch (r->kind) {
	case OFFS_CFI_CFA_SP:
	case OFFS_CFI_CFA_BP:
		printf("%s%+d ", r->kind == OFFS_CFI_CFA_SP ? "rsp" : "rbp",
		       r->cfa_off);
		if (r->bp == OFFS_CFI_BP_SAME)
			printf("u");
		else if (r->bp == OFFS_CFI_BP_CFA)
			printf("c%+d", r->bp_off);
		else
			printf("?");
		break;
	case OFFS_CFI_PLT:
		printf("plt>=%d", r->cfa_off);
		break;
	case OFFS_CFI_SIGNAL:
		printf("signal");
		break;
	case OFFS_CFI_STOP:
		printf("stop");
		break;
	case OFFS_CFI_NONE:
		printf("none");
		break;
	default:
		printf("invalid");
		break;
	}
}

int main(int argc, char **argv)
{
	struct offs_cfi_table *t;
	struct file_src fs;
	struct offs_cfi_src src = { .read = file_read, .ctx = &fs,
				    .check = count_check };
	struct offs_cfi_work work;
	struct stat st;
	int summary = 0, err;
	const char *path;
	u32 i;

	if (getenv("CFI_DUMP_STOP_AFTER"))
		stop_after = strtoul(getenv("CFI_DUMP_STOP_AFTER"), NULL, 10);
	if (argc == 3 && (!strcmp(argv[1], "-s") || !strcmp(argv[1], "-w"))) {
		summary = argv[1][1] == 's' ? 1 : 2;
		path = argv[2];
	} else if (argc == 2) {
		path = argv[1];
	} else {
		fprintf(stderr, "usage: cfi-dump [-s|-w] FILE\n");
		return 2;
	}
	fs.f = fopen(path, "rb");
	if (!fs.f || fstat(fileno(fs.f), &st)) {
		perror(path);
		return 1;
	}
	src.size = st.st_size;
	err = offs_cfi_build(&src, &t, &work);
	fclose(fs.f);
	if (summary == 2)
		printf("work bytes %llu cies %llu checks %lu over %d lookups %llu probes %llu\n",
		       (unsigned long long)work.bytes,
		       (unsigned long long)work.cie_parses, checks, work.over,
		       (unsigned long long)work.lookups,
		       (unsigned long long)work.probes);
	if (err) {
		fprintf(stderr, "cfi-dump: %s: %s\n", path, strerror(-err));
		return 1;
	}
	if (summary == 2) {
		printf("rows %u\n", t->nrows);
	} else if (summary) {
		printf("rows %u rules %u bytes %zu\n", t->nrows, t->nrules, t->bytes);
	} else {
		for (i = 0; i < t->nrows; i++) {
			printf("%x ", t->pcs[i]);
			print_rule(&t->rules[t->rule_idx[i]]);
			putchar('\n');
		}
	}
	offs_cfi_free(t);
	return 0;
}
