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
#include <linux/kernel.h>
#include <linux/mm.h>		/* PAGE_SIZE */

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
 * file is -EINVAL).  check(check_ctx), if set, is called every
 * OFFS_CFI_CHECK_EVERY steps (call-frame instructions, records, rule hash
 * and sort steps): it may sleep (the module lets the scheduler in there)
 * and returns 0 to go on, or a negative errno that ends the build with it
 * (the module's time budget, or rmmod).
 */
struct offs_cfi_src {
	int (*read)(void *ctx, u64 off, void *buf, size_t len);
	void *ctx;
	u64 size;		/* the file's size */
	int (*check)(void *check_ctx);
	void *check_ctx;
};

/*
 * Bounds on what one file may make the compiler read, do and build.  The
 * work of a build is linear in its .eh_frame: each FDE's program runs
 * once; CIEs are parsed once per offset (failures remembered too) in a
 * cache of OFFS_CFI_CIE_CACHE, and FDEs that refer to more CIEs in turn
 * than it holds parse them again, so the bytes a build interprets (FDEs
 * and CIEs) are bounded: OFFS_CFI_WORK_FACTOR times the section plus
 * OFFS_CFI_WORK_SLACK, over which the build fails with -E2BIG; a rule
 * lookup probes a hash seeded at random per build, at most
 * OFFS_CFI_MAX_PROBE slots (ucfi.c); and every call-frame instruction,
 * record and sort step counts towards the next src->check().  Real files
 * stay far below (Debian's largest CIE is 40 bytes; nodejs has 14 CIEs
 * for 75,922 FDEs, in runs).
 */
#define OFFS_CFI_MAX_EH_FRAME	(32U << 20)	/* bytes of .eh_frame */
#define OFFS_CFI_MAX_ROWS	(4U << 20)
#define OFFS_CFI_MAX_RULES	65535U
#define OFFS_CFI_MAX_CIE	4096U		/* bytes of one CIE record */
#define OFFS_CFI_CIE_CACHE	16
#define OFFS_CFI_WORK_FACTOR	4
#define OFFS_CFI_WORK_SLACK	(1024U * 1024)
#define OFFS_CFI_CHECK_EVERY	256

/* What a build did (for its caller's statistics). */
struct offs_cfi_work {
	u64 bytes;		/* bytes of FDEs and CIEs interpreted */
	u64 cie_parses;		/* CIEs parsed (cache misses) */
	u64 lookups;		/* rule lookups (one per row emitted) */
	u64 probes;		/* slots of the rule hash they looked at */
	bool over;		/* stopped at the work bound */
};

int offs_cfi_build(const struct offs_cfi_src *src, struct offs_cfi_table **out,
		   struct offs_cfi_work *work);
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

/*
 * x86-64 signal frame: when a handler returns into the trampoline
 * (__restore_rt, an 'S' FDE), sp points at the ucontext; its mcontext
 * (struct sigcontext: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp,
 * rip) starts 40 bytes in.
 */
#define OFFS_SIGCTX_OFF		40
#define OFFS_SIGCTX_BP		10
#define OFFS_SIGCTX_SP		15
#define OFFS_SIGCTX_IP		16

static __always_inline int offs_rd_user(const struct offs_unwind_ops *ops,
					u64 addr, u64 *v, u64 *fault_addr)
{
	if (ops->read(ops->ctx, addr, v, sizeof(*v))) {
		*fault_addr = addr;
		return -EFAULT;
	}
	return 0;
}

/*
 * Walk a user stack from regs into ips[] (leaf first; the leaf is always
 * recorded); returns the depth.  Each frame is followed by its file's
 * compiled CFI where ops->rule() finds a rule for it, by frame
 * pointers elsewhere (no table, or code no FDE covers); out->cfi_frames
 * counts the frames a CFI rule found.  Stops at the outermost frame (an
 * undefined return address, one below PAGE_SIZE, or frame pointers that
 * end), at a failed read (out->fault_addr: where), at max frames
 * (out->truncated), or at CFI that cannot be followed or makes no sense
 * (out->bad: a rule we cannot represent, a CFA that does not grow, leaves
 * the stack span or is misaligned, one based on a lost rbp, a signal
 * frame's registers outside the stack).
 *
 * Inline, so that a caller whose ops are constants (umm.c) has rule() and
 * read() called directly and inlined: two indirect calls a frame were a
 * tenth of a cold capture's instructions (docs/BENCHMARKS-tick.md).
 */
static __always_inline unsigned int
offs_cfi_unwind_inline(const struct offs_unwind_ops *ops,
		       const struct offs_unwind_regs *regs,
		       unsigned long *ips, unsigned int max,
		       struct offs_unwind_out *out)
{
	u64 pc = regs->ip, sp = regs->sp, bp = regs->bp, cfa, ra, v;
	const struct offs_cfi_rule *r;
	u64 frame[2];
	bool exact = true, bp_known = true, cfi;
	unsigned int n = 0;

	out->truncated = false;
	out->fault_addr = 0;
	out->bad = false;
	out->cfi_frames = 0;
	if (!max)
		return 0;
	ips[n++] = pc;
	for (;;) {
		/* A return address is looked up at the call, just before it. */
		r = ops->rule(ops->ctx, exact ? pc : pc - 1);
		cfi = false;
		if (!r || r->kind == OFFS_CFI_NONE) {
			/* No CFI here: frame pointers, as far as they go. */
			if (!bp_known || bp < sp || bp - regs->sp > OFFS_USTACK_SPAN ||
			    (bp & 7))
				break;
			if (ops->read(ops->ctx, bp, frame, sizeof(frame))) {
				out->fault_addr = bp;
				break;
			}
			cfa = bp + sizeof(frame);
			ra = frame[1];
			bp = frame[0];
		} else {
			switch (r->kind) {
			case OFFS_CFI_SIGNAL:
				/*
				 * The interrupted context (an exact pc): its
				 * three words, read one by one (a local copy
				 * of the whole context is zeroed at each walk
				 * on kernels built with INIT_STACK_ALL_ZERO).
				 */
				v = sp + OFFS_SIGCTX_OFF;
				if (offs_rd_user(ops, v + 8 * OFFS_SIGCTX_IP, &pc,
						 &out->fault_addr) ||
				    offs_rd_user(ops, v + 8 * OFFS_SIGCTX_BP, &bp,
						 &out->fault_addr) ||
				    offs_rd_user(ops, v + 8 * OFFS_SIGCTX_SP, &sp,
						 &out->fault_addr))
					goto done;
				bp_known = true;
				exact = true;
				cfi = true;
				if (pc < PAGE_SIZE || sp - regs->sp > OFFS_USTACK_SPAN) {
					out->bad = true;
					goto done;
				}
				goto record;
			case OFFS_CFI_PLT:
				cfa = sp + 8 + ((pc & 15) >= (u64)r->cfa_off ? 8 : 0);
				break;
			case OFFS_CFI_CFA_SP:
				cfa = sp + r->cfa_off;
				break;
			case OFFS_CFI_CFA_BP:
				if (!bp_known) {
					out->bad = true;
					goto done;
				}
				cfa = bp + r->cfa_off;
				break;
			case OFFS_CFI_STOP:
				goto done;
			default:	/* INVALID */
				out->bad = true;
				goto done;
			}
			if (cfa <= sp || cfa - regs->sp > OFFS_USTACK_SPAN ||
			    (cfa & 7)) {
				out->bad = true;
				break;
			}
			if (offs_rd_user(ops, cfa - 8, &ra, &out->fault_addr))
				break;
			if (r->kind == OFFS_CFI_CFA_SP || r->kind == OFFS_CFI_CFA_BP) {
				if (r->bp == OFFS_CFI_BP_CFA) {
					if (offs_rd_user(ops, cfa + r->bp_off, &v,
							 &out->fault_addr))
						break;
					bp = v;
					bp_known = true;
				} else if (r->bp == OFFS_CFI_BP_UNKNOWN) {
					bp_known = false;
				}
			}
			cfi = true;
		}
		/* Each frame must be above the last one. */
		if (cfa <= sp)
			break;
		sp = cfa;
		pc = ra;
		exact = false;
		if (pc < PAGE_SIZE)
			break;
record:
		if (n == max) {
			out->truncated = true;
			break;
		}
		ips[n++] = pc;
		if (cfi)
			out->cfi_frames++;
	}
done:
	return n;
}

unsigned int offs_cfi_unwind(const struct offs_unwind_ops *ops,
			     const struct offs_unwind_regs *regs,
			     unsigned long *ips, unsigned int max,
			     struct offs_unwind_out *out);

#endif /* OFFS_UCFI_H */
