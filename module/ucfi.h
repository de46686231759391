/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ucfi.h - user-space call-frame information compiled into compact tables.
 *
 * Every x86-64 ELF file carries DWARF call-frame information in .eh_frame
 * (found through PT_GNU_EH_FRAME).  Interpreting it for every frame of
 * every sample would be slow, so each file's CFI is compiled once into a
 * sorted table: for each address range, one small rule saying where the
 * caller's frame is (the CFA, from rsp or rbp plus an offset), whether rbp
 * was saved and where, or that the range is a PLT stub, a signal frame,
 * the end of the stack, or not unwindable.  An unwinder then looks each
 * frame up by binary search (offs_cfi_lookup()).  The return address is at
 * CFA - 8 on x86-64 (rules where it is not are not unwindable).
 *
 * The compiler only reads the file through a callback, so the same code
 * runs in the module (page cache reads) and in a user-space test harness
 * (tests/ucfi/), which checks it against readelf.
 */
#ifndef OFFS_UCFI_H
#define OFFS_UCFI_H

#include <linux/types.h>

enum offs_cfi_kind {
	OFFS_CFI_INVALID,	/* CFI we cannot follow: stop, counted */
	OFFS_CFI_CFA_SP,	/* CFA = rsp + cfa_off */
	OFFS_CFI_CFA_BP,	/* CFA = rbp + cfa_off */
	OFFS_CFI_PLT,		/* PLT stub: CFA = rsp + 8, +8 if (rip & 15) >= cfa_off */
	OFFS_CFI_SIGNAL,	/* signal trampoline: registers in a sigcontext */
	OFFS_CFI_STOP,		/* return address undefined: outermost frame */
	OFFS_CFI_NONE,		/* no FDE covers it: frame pointers */
};

enum offs_cfi_bp {
	OFFS_CFI_BP_SAME,	/* rbp is the caller's */
	OFFS_CFI_BP_CFA,	/* the caller's rbp is saved at CFA + bp_off */
	OFFS_CFI_BP_UNKNOWN,	/* anything else: the caller's rbp is lost */
};

struct offs_cfi_rule {
	u8 kind;		/* enum offs_cfi_kind */
	u8 bp;			/* enum offs_cfi_bp */
	s16 bp_off;
	s32 cfa_off;
};

/*
 * A compiled table: rows sorted by address, row i covering
 * [pcs[i], pcs[i + 1]) with rules[rule_idx[i]].  Addresses are ELF virtual
 * addresses of the file (as in its program headers).
 */
#define OFFS_CFI_MAX_SEGS	4

struct offs_cfi_table {
	u32 nrows;
	u32 nrules;
	u32 nsegs;
	/* The executable PT_LOAD segments: file offset -> virtual address. */
	struct {
		u64 off;
		u64 vaddr;
		u64 len;
	} segs[OFFS_CFI_MAX_SEGS];
	u32 *pcs;
	u16 *rule_idx;
	struct offs_cfi_rule *rules;
	size_t bytes;		/* memory the table takes */
};

/*
 * How the compiler reads the file: read(ctx, off, buf, len) fills buf with
 * len bytes at file offset off and returns 0, or a negative errno (a short
 * file is -EINVAL).
 */
struct offs_cfi_src {
	int (*read)(void *ctx, u64 off, void *buf, size_t len);
	void *ctx;
	u64 size;		/* the file's size */
};

/* Bounds on what one file may make the compiler read and build. */
#define OFFS_CFI_MAX_EH_FRAME	(32U << 20)	/* bytes of .eh_frame */
#define OFFS_CFI_MAX_ROWS	(4U << 20)
#define OFFS_CFI_MAX_RULES	65535U

int offs_cfi_build(const struct offs_cfi_src *src, struct offs_cfi_table **out);
bool offs_cfi_vaddr(const struct offs_cfi_table *t, u64 off, u64 *vaddr);
void offs_cfi_free(struct offs_cfi_table *t);
const struct offs_cfi_rule *offs_cfi_lookup(const struct offs_cfi_table *t,
					    u64 pc);

/*
 * Unwinding with the tables.  The caller says how to find the rule for an
 * address (rule(): its table's offs_cfi_lookup(), NULL where no table or
 * FDE covers it: that frame is then followed by frame pointers) and how
 * to read user memory without faulting (read(), 0 or an error).  Both
 * are called with whatever locks the caller holds (pin.c: a task's
 * pi_lock, IRQs off), so neither may sleep.
 */
struct offs_unwind_ops {
	/* The rule for pc (a virtual address), NULL where no CFI covers it. */
	const struct offs_cfi_rule *(*rule)(void *ctx, u64 pc);
	int (*read)(void *ctx, u64 addr, void *buf, size_t len);
	void *ctx;
};

struct offs_unwind_regs {
	u64 ip;
	u64 sp;
	u64 bp;
};

/* Frame addresses further than this above the stack pointer are garbage. */
#define OFFS_USTACK_SPAN	(16ULL << 20)

/* How a walk ended, and how it got there. */
struct offs_unwind_out {
	u64 fault_addr;		/* the read that failed, 0 if none did */
	unsigned int cfi_frames; /* frames found with a CFI rule */
	bool truncated;		/* stopped at max frames */
	bool bad;		/* stopped at CFI that cannot be followed */
};

unsigned int offs_cfi_unwind(const struct offs_unwind_ops *ops,
			     const struct offs_unwind_regs *regs,
			     unsigned long *ips, unsigned int max,
			     struct offs_unwind_out *out);

#endif /* OFFS_UCFI_H */
