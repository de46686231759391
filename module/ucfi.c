// SPDX-License-Identifier: GPL-2.0
/*
 * ucfi.c - compile a file's .eh_frame into a compact sorted table
 * (ucfi.h), and look addresses up in it.
 *
 * The input is a file any user could have written: every read is bounded
 * by the buffer it reads from, every count and size by the limits in
 * ucfi.h, and a record that does not parse is skipped (its range stays
 * not unwindable) rather than trusted.  What the compiler keeps of the
 * DWARF call-frame program, per address: the CFA rule (a register, rsp or
 * rbp, plus an offset; or the standard PLT expression), the rule for rbp,
 * and whether the return address is at CFA - 8 or undefined (outermost
 * frame).  Signal trampolines ('S' augmentation) are marked as such.
 *
 * The work is bounded as well as the reads (ucfi.h): linear in the
 * section, with a check (src->check) every OFFS_CFI_CHECK_EVERY steps
 * where the module lets the scheduler in and ends a build that is over
 * its time or being unloaded.
 *
 * Sleeps (allocations with GFP_KERNEL, src->check); runs once per file,
 * never with a sampled task's lock held.
 */
#include <linux/kernel.h>
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/elf.h>
#include <linux/hash.h>
#include <linux/random.h>

#include "ucfi.h"

/* DWARF pointer encodings (DW_EH_PE_*), as used in .eh_frame. */
#define OFFS_PE_OMIT		0xff
#define OFFS_PE_FORMAT		0x0f
#define OFFS_PE_APPL		0x70
#define OFFS_PE_INDIRECT	0x80
#define OFFS_PE_ABSPTR		0x00
#define OFFS_PE_ULEB128		0x01
#define OFFS_PE_UDATA2		0x02
#define OFFS_PE_UDATA4		0x03
#define OFFS_PE_UDATA8		0x04
#define OFFS_PE_SLEB128		0x09
#define OFFS_PE_SDATA2		0x0a
#define OFFS_PE_SDATA4		0x0b
#define OFFS_PE_SDATA8		0x0c
#define OFFS_PE_PCREL		0x10
#define OFFS_PE_DATAREL		0x30

/* DWARF register numbers on x86-64. */
#define OFFS_DW_RBP		6
#define OFFS_DW_RSP		7
#define OFFS_DW_RA		16

/* Call-frame instructions (DW_CFA_*). */
#define OFFS_CFA_ADVANCE_LOC	0x40
#define OFFS_CFA_OFFSET		0x80
#define OFFS_CFA_RESTORE	0xc0
#define OFFS_CFA_NOP		0x00
#define OFFS_CFA_SET_LOC	0x01
#define OFFS_CFA_ADVANCE_LOC1	0x02
#define OFFS_CFA_ADVANCE_LOC2	0x03
#define OFFS_CFA_ADVANCE_LOC4	0x04
#define OFFS_CFA_OFFSET_EXT	0x05
#define OFFS_CFA_RESTORE_EXT	0x06
#define OFFS_CFA_UNDEFINED	0x07
#define OFFS_CFA_SAME_VALUE	0x08
#define OFFS_CFA_REGISTER	0x09
#define OFFS_CFA_REMEMBER	0x0a
#define OFFS_CFA_RESTORE_STATE	0x0b
#define OFFS_CFA_DEF_CFA	0x0c
#define OFFS_CFA_DEF_CFA_REG	0x0d
#define OFFS_CFA_DEF_CFA_OFF	0x0e
#define OFFS_CFA_DEF_CFA_EXPR	0x0f
#define OFFS_CFA_EXPRESSION	0x10
#define OFFS_CFA_OFFSET_EXT_SF	0x11
#define OFFS_CFA_DEF_CFA_SF	0x12
#define OFFS_CFA_DEF_CFA_OFF_SF	0x13
#define OFFS_CFA_VAL_OFFSET	0x14
#define OFFS_CFA_VAL_OFFSET_SF	0x15
#define OFFS_CFA_VAL_EXPRESSION	0x16
#define OFFS_CFA_GNU_ARGS_SIZE	0x2e
#define OFFS_CFA_GNU_NEG_OFF_EXT 0x2f

#define OFFS_CFI_MAX_PHDRS	64
#define OFFS_CFI_STATE_STACK	8
/* Probes of the rule hash; more (crafted collisions) ends the build. */
#define OFFS_CFI_MAX_PROBE	64

/* ---- bounded little-endian reading ---- */

struct offs_cur {
	const u8 *p;
	const u8 *end;
	bool err;		/* a read went past end */
};

static bool offs_cur_need(struct offs_cur *c, size_t n)
{
	if (c->err || (size_t)(c->end - c->p) < n) {
		c->err = true;
		return false;
	}
	return true;
}

static u64 offs_rd_le(struct offs_cur *c, unsigned int n)
{
	u64 v = 0;
	unsigned int i;

	if (!offs_cur_need(c, n))
		return 0;
	for (i = 0; i < n; i++)
		v |= (u64)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static u8 offs_rd_u8(struct offs_cur *c)
{
	return offs_rd_le(c, 1);
}

static u64 offs_rd_uleb(struct offs_cur *c)
{
	u64 v = 0;
	unsigned int shift = 0;
	u8 b;

	do {
		b = offs_rd_u8(c);
		if (shift < 64)
			v |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->err && shift < 70);
	if (b & 0x80)
		c->err = true;	/* longer than any 64-bit value */
	return v;
}

static s64 offs_rd_sleb(struct offs_cur *c)
{
	u64 v = 0;
	unsigned int shift = 0;
	u8 b;

	do {
		b = offs_rd_u8(c);
		if (shift < 64)
			v |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->err && shift < 70);
	if (b & 0x80)
		c->err = true;
	else if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (s64)v;
}

static void offs_cur_skip(struct offs_cur *c, u64 n)
{
	if (!offs_cur_need(c, n))
		return;
	c->p += n;
}

/*
 * A pointer in encoding enc at c.  vaddr is the virtual address of the
 * first byte of the buffer c reads from (for pc-relative pointers);
 * datarel is the base of data-relative ones.  Returns false on an
 * encoding we do not follow (indirect, text- or function-relative).
 */
static bool offs_rd_ptr(struct offs_cur *c, u8 enc, const u8 *base,
			u64 vaddr, u64 datarel, u64 *out)
{
	u64 field = vaddr + (c->p - base), v;

	if (enc == OFFS_PE_OMIT || (enc & OFFS_PE_INDIRECT))
		return false;
	switch (enc & OFFS_PE_FORMAT) {
	case OFFS_PE_ABSPTR:
	case OFFS_PE_UDATA8:
	case OFFS_PE_SDATA8:
		v = offs_rd_le(c, 8);
		break;
	case OFFS_PE_UDATA4:
		v = offs_rd_le(c, 4);
		break;
	case OFFS_PE_SDATA4:
		v = (u64)(s64)(s32)offs_rd_le(c, 4);
		break;
	case OFFS_PE_UDATA2:
		v = offs_rd_le(c, 2);
		break;
	case OFFS_PE_SDATA2:
		v = (u64)(s64)(s16)offs_rd_le(c, 2);
		break;
	case OFFS_PE_ULEB128:
		v = offs_rd_uleb(c);
		break;
	case OFFS_PE_SLEB128:
		v = (u64)offs_rd_sleb(c);
		break;
	default:
		return false;
	}
	switch (enc & OFFS_PE_APPL) {
	case 0:
		break;
	case OFFS_PE_PCREL:
		v += field;
		break;
	case OFFS_PE_DATAREL:
		v += datarel;
		break;
	default:
		return false;
	}
	*out = v;
	return !c->err;
}

/* ---- the call-frame program ---- */

enum offs_reg_how { OFFS_R_SAME, OFFS_R_UNDEF, OFFS_R_AT_CFA, OFFS_R_OTHER };

struct offs_reg_rule {
	u8 how;
	s64 off;		/* OFFS_R_AT_CFA: saved at CFA + off */
};

struct offs_cfa_state {
	u64 cfa_reg;
	s64 cfa_off;
	bool cfa_expr;
	int plt;		/* the PLT expression's threshold, or -1 */
	struct offs_reg_rule bp;
	struct offs_reg_rule ra;
};

struct offs_cie {
	u32 off;		/* in .eh_frame, for the cache */
	bool bad;		/* it does not parse: its FDEs are skipped */
	u64 code_align;
	s64 data_align;
	u64 ra_reg;
	u8 fde_enc;
	bool has_aug_data;	/* 'z': FDEs carry augmentation data */
	bool signal;		/* 'S' */
	const u8 *insns, *insns_end;
	struct offs_cfa_state init;
};

/*
 * DW_OP sequence of the standard x86-64 PLT CFA:
 *   rsp + 8 + ((rip & 15) >= N ? 8 : 0)
 * as breg7 8, breg16 0, lit15, and, litN, ge, lit3, shl, plus.  Returns N,
 * or -1 for anything else.
 */
static int offs_plt_expr(const u8 *e, u64 len)
{
	static const u8 head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a };
	static const u8 tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	if (len != sizeof(head) + 1 + sizeof(tail) ||
	    memcmp(e, head, sizeof(head)) ||
	    memcmp(e + sizeof(head) + 1, tail, sizeof(tail)))
		return -1;
	if (e[sizeof(head)] < 0x30 || e[sizeof(head)] > 0x3f)	/* lit0..15 */
		return -1;
	return e[sizeof(head)] - 0x30;
}

static struct offs_reg_rule *offs_reg_of(struct offs_cfa_state *s, u64 reg)
{
	if (reg == OFFS_DW_RBP)
		return &s->bp;
	if (reg == OFFS_DW_RA)
		return &s->ra;
	return NULL;
}

/* A growable array of rows while building. */
struct offs_row {
	u32 pc;
	u16 rule;
	u16 gap;		/* a marker at the end of an FDE: loses ties */
};

struct offs_builder {
	struct offs_row *rows;
	u32 nrows, cap;
	struct offs_cfi_rule *rules;
	u32 nrules, rules_cap;
	u16 *hash;		/* rule indexes + 1, 0 empty */
	u32 hash_size;		/* 1 << hash_bits */
	unsigned int hash_bits;
	u64 seed;		/* of the rule hash, random per build */
	bool full;		/* a bound was hit */
	const struct offs_cfi_src *src;
	struct offs_cfi_work work;
	u64 work_max;		/* bound on work.bytes */
	unsigned int steps;	/* since the last check */
	int err;		/* src->check ended the build */
};

/*
 * One step of work done (a record, a sort step): every
 * OFFS_CFI_CHECK_EVERY of them, ask src->check whether to go on.
 * Returns false once the build must end (b->err says why).
 */
static bool offs_step(struct offs_builder *b)
{
	if (b->err)
		return false;
	if (++b->steps < OFFS_CFI_CHECK_EVERY)
		return true;
	b->steps = 0;
	if (b->src->check)
		b->err = b->src->check(b->src->check_ctx);
	return !b->err;
}

/* n more bytes interpreted; false (and the build over) past the bound. */
static bool offs_charge(struct offs_builder *b, u64 n)
{
	b->work.bytes += n;
	if (b->work.bytes <= b->work_max)
		return true;
	b->work.over = true;
	b->full = true;
	return false;
}

static void *offs_cfi_alloc(size_t n, size_t size)
{
	return kvmalloc_array(n, size, GFP_KERNEL | __GFP_NOWARN);
}

/*
 * Room for one more element in *arr: 0, -E2BIG at the bound max (the file
 * asks for more than a table may hold), -ENOMEM (the machine has no
 * memory now: not the file's fault).
 */
static int offs_grow(void **arr, u32 *cap, u32 used, size_t size, u32 max)
{
	u32 ncap;
	void *n;

	if (used < *cap)
		return 0;
	if (*cap >= max)
		return -E2BIG;
	ncap = *cap ? min(*cap * 2, max) : 256;
	n = offs_cfi_alloc(ncap, size);
	if (!n)
		return -ENOMEM;
	if (*arr)
		memcpy(n, *arr, (size_t)used * size);
	kvfree(*arr);
	*arr = n;
	*cap = ncap;
	return 0;
}

/* A bound was hit (err -E2BIG: the table would be incomplete) or no memory. */
static void offs_fail(struct offs_builder *b, int err)
{
	if (err == -ENOMEM && !b->err)
		b->err = err;
	b->full = true;
}

/*
 * The hash of a rule: all of it, packed into 64 bits, mixed with the
 * build's random seed and multiplied (hash_64() keeps the high bits, which
 * every bit of the input reaches): a file cannot choose rules that
 * collide.
 */
static u32 offs_rule_hash(const struct offs_builder *b,
			  const struct offs_cfi_rule *r)
{
	u64 v = r->kind | (u64)r->bp << 8 | (u64)(u16)r->bp_off << 16 |
		(u64)(u32)r->cfa_off << 32;

	return hash_64(v ^ b->seed, b->hash_bits);
}

static bool offs_rule_eq(const struct offs_cfi_rule *a,
			 const struct offs_cfi_rule *b)
{
	return a->kind == b->kind && a->bp == b->bp &&
	       a->bp_off == b->bp_off && a->cfa_off == b->cfa_off;
}

/* Twice the size (at least 1,024 slots), every rule hashed again. */
static bool offs_hash_rebuild(struct offs_builder *b)
{
	unsigned int bits = b->hash_size ? b->hash_bits + 1 : 10;
	u32 size = 1U << bits, i, j, probes;
	u16 *h = offs_cfi_alloc(size, sizeof(*h));

	if (!h) {
		offs_fail(b, -ENOMEM);
		return false;
	}
	memset(h, 0, size * sizeof(*h));
	kvfree(b->hash);
	b->hash = h;
	b->hash_size = size;
	b->hash_bits = bits;
	for (i = 0; i < b->nrules; i++) {
		probes = 0;
		for (j = offs_rule_hash(b, &b->rules[i]); h[j];
		     j = (j + 1) & (size - 1))
			if (++probes > OFFS_CFI_MAX_PROBE) {
				offs_fail(b, -E2BIG);
				return false;
			}
		h[j] = i + 1;
		if (!offs_step(b))
			return false;
	}
	return true;
}

/* The index of rule r in the table of distinct rules, or -1 (bound). */
static int offs_rule_index(struct offs_builder *b, const struct offs_cfi_rule *r)
{
	u32 j, probes = 0;
	int err;

	if (b->nrules * 2 >= b->hash_size && !offs_hash_rebuild(b))
		return -1;
	b->work.lookups++;
	for (j = offs_rule_hash(b, r); b->hash[j];
	     j = (j + 1) & (b->hash_size - 1)) {
		b->work.probes++;
		if (offs_rule_eq(&b->rules[b->hash[j] - 1], r))
			return b->hash[j] - 1;
		if (++probes > OFFS_CFI_MAX_PROBE) {
			offs_fail(b, -E2BIG);
			return -1;
		}
	}
	err = b->nrules >= OFFS_CFI_MAX_RULES ? -E2BIG :
	      offs_grow((void **)&b->rules, &b->rules_cap, b->nrules,
			sizeof(*b->rules), OFFS_CFI_MAX_RULES);
	if (err) {
		offs_fail(b, err);
		return -1;
	}
	b->rules[b->nrules] = *r;
	b->hash[j] = ++b->nrules;
	return b->nrules - 1;
}

/* What an unwinder needs of a state. */
static void offs_rule_of(const struct offs_cie *cie,
			 const struct offs_cfa_state *s, struct offs_cfi_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = OFFS_CFI_INVALID;
	if (cie->signal) {
		r->kind = OFFS_CFI_SIGNAL;
		return;
	}
	if (s->ra.how == OFFS_R_UNDEF) {
		r->kind = OFFS_CFI_STOP;
		return;
	}
	if (s->cfa_expr) {
		if (s->plt >= 0 && s->ra.how == OFFS_R_AT_CFA &&
		    s->ra.off == -8) {
			r->kind = OFFS_CFI_PLT;
			r->cfa_off = s->plt;
		}
		return;
	}
	if (s->ra.how != OFFS_R_AT_CFA || s->ra.off != -8 ||
	    s->cfa_off < S32_MIN || s->cfa_off > S32_MAX)
		return;
	if (s->cfa_reg == OFFS_DW_RSP)
		r->kind = OFFS_CFI_CFA_SP;
	else if (s->cfa_reg == OFFS_DW_RBP)
		r->kind = OFFS_CFI_CFA_BP;
	else
		return;
	r->cfa_off = s->cfa_off;
	switch (s->bp.how) {
	case OFFS_R_SAME:
		r->bp = OFFS_CFI_BP_SAME;
		break;
	case OFFS_R_AT_CFA:
		if (s->bp.off >= S16_MIN && s->bp.off <= S16_MAX) {
			r->bp = OFFS_CFI_BP_CFA;
			r->bp_off = s->bp.off;
			break;
		}
		fallthrough;
	default:
		r->bp = OFFS_CFI_BP_UNKNOWN;
		break;
	}
}

static void offs_emit(struct offs_builder *b, u64 pc, int rule, bool gap)
{
	struct offs_row *row;
	int err;

	/* rule < 0: offs_rule_index() has failed the build already. */
	if (rule < 0 || pc > U32_MAX)
		return;
	/* A later state for the same address replaces the earlier one. */
	if (!gap && b->nrows && !b->rows[b->nrows - 1].gap &&
	    b->rows[b->nrows - 1].pc == pc) {
		b->rows[b->nrows - 1].rule = rule;
		return;
	}
	err = offs_grow((void **)&b->rows, &b->cap, b->nrows, sizeof(*b->rows),
			OFFS_CFI_MAX_ROWS);
	if (err) {
		offs_fail(b, err);
		return;
	}
	row = &b->rows[b->nrows++];
	row->pc = pc;
	row->rule = rule;
	row->gap = gap;
}

static void offs_emit_state(struct offs_builder *b, const struct offs_cie *cie,
			    const struct offs_cfa_state *s, u64 pc)
{
	struct offs_cfi_rule r;

	offs_rule_of(cie, s, &r);
	offs_emit(b, pc, offs_rule_index(b, &r), false);
}

/*
 * Run call-frame instructions [c->p, c->end).  With emit (an FDE's
 * program), rows are emitted into b for [*loc, end); without (a CIE's
 * initial instructions) the state is only computed.  Each instruction is
 * a step of b's work (one record may hold millions).  Returns false on
 * anything malformed or not understood in a way that matters, and when
 * the build must end.
 */
static bool offs_run(struct offs_builder *b, bool emit,
		     const struct offs_cie *cie, struct offs_cur *c,
		     struct offs_cfa_state *s, u64 *loc, u64 end,
		     const u8 *base, u64 vaddr)
{
	struct offs_cfa_state stack[OFFS_CFI_STATE_STACK];
	unsigned int depth = 0;
	struct offs_reg_rule *rr;
	u64 reg, delta, len, next;
	s64 off;
	u8 op;

	while (c->p < c->end && !c->err) {
		if (!offs_step(b) || b->full)
			return false;
		op = offs_rd_u8(c);
		delta = 0;
		switch (op & 0xc0) {
		case OFFS_CFA_ADVANCE_LOC:
			delta = op & 0x3f;
			goto advance;
		case OFFS_CFA_OFFSET:
			reg = op & 0x3f;
			off = (s64)offs_rd_uleb(c) * cie->data_align;
			goto offset;
		case OFFS_CFA_RESTORE:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case OFFS_CFA_NOP:
		case OFFS_CFA_GNU_ARGS_SIZE:
			if (op == OFFS_CFA_GNU_ARGS_SIZE)
				offs_rd_uleb(c);
			break;
		case OFFS_CFA_SET_LOC:
			if (!offs_rd_ptr(c, cie->fde_enc, base, vaddr, 0, &next) ||
			    next < *loc)
				return false;
			if (emit && *loc < end)
				offs_emit_state(b, cie, s, *loc);
			*loc = next;
			break;
		case OFFS_CFA_ADVANCE_LOC1:
			delta = offs_rd_le(c, 1);
			goto advance;
		case OFFS_CFA_ADVANCE_LOC2:
			delta = offs_rd_le(c, 2);
			goto advance;
		case OFFS_CFA_ADVANCE_LOC4:
			delta = offs_rd_le(c, 4);
			goto advance;
		case OFFS_CFA_OFFSET_EXT:
			reg = offs_rd_uleb(c);
			off = (s64)offs_rd_uleb(c) * cie->data_align;
			goto offset;
		case OFFS_CFA_OFFSET_EXT_SF:
			reg = offs_rd_uleb(c);
			off = offs_rd_sleb(c) * cie->data_align;
			goto offset;
		case OFFS_CFA_GNU_NEG_OFF_EXT:
			reg = offs_rd_uleb(c);
			off = -(s64)offs_rd_uleb(c) * cie->data_align;
			goto offset;
		case OFFS_CFA_RESTORE_EXT:
			reg = offs_rd_uleb(c);
			goto restore;
		case OFFS_CFA_UNDEFINED:
		case OFFS_CFA_SAME_VALUE:
			rr = offs_reg_of(s, offs_rd_uleb(c));
			if (rr) {
				rr->how = op == OFFS_CFA_UNDEFINED ?
					  OFFS_R_UNDEF : OFFS_R_SAME;
				rr->off = 0;
			}
			break;
		case OFFS_CFA_REGISTER:
			rr = offs_reg_of(s, offs_rd_uleb(c));
			offs_rd_uleb(c);
			if (rr)
				rr->how = OFFS_R_OTHER;
			break;
		case OFFS_CFA_VAL_OFFSET:
		case OFFS_CFA_VAL_OFFSET_SF:
			rr = offs_reg_of(s, offs_rd_uleb(c));
			if (op == OFFS_CFA_VAL_OFFSET)
				offs_rd_uleb(c);
			else
				offs_rd_sleb(c);
			if (rr)
				rr->how = OFFS_R_OTHER;
			break;
		case OFFS_CFA_EXPRESSION:
		case OFFS_CFA_VAL_EXPRESSION:
			rr = offs_reg_of(s, offs_rd_uleb(c));
			offs_cur_skip(c, offs_rd_uleb(c));
			if (rr)
				rr->how = OFFS_R_OTHER;
			break;
		case OFFS_CFA_REMEMBER:
			if (depth == OFFS_CFI_STATE_STACK)
				return false;
			stack[depth++] = *s;
			break;
		case OFFS_CFA_RESTORE_STATE:
			if (!depth)
				return false;
			/* The CFA is part of the state since DWARF 3. */
			*s = stack[--depth];
			break;
		case OFFS_CFA_DEF_CFA:
			s->cfa_reg = offs_rd_uleb(c);
			s->cfa_off = offs_rd_uleb(c);
			s->cfa_expr = false;
			break;
		case OFFS_CFA_DEF_CFA_SF:
			s->cfa_reg = offs_rd_uleb(c);
			s->cfa_off = offs_rd_sleb(c) * cie->data_align;
			s->cfa_expr = false;
			break;
		case OFFS_CFA_DEF_CFA_REG:
			s->cfa_reg = offs_rd_uleb(c);
			s->cfa_expr = false;
			break;
		case OFFS_CFA_DEF_CFA_OFF:
			s->cfa_off = offs_rd_uleb(c);
			break;
		case OFFS_CFA_DEF_CFA_OFF_SF:
			s->cfa_off = offs_rd_sleb(c) * cie->data_align;
			break;
		case OFFS_CFA_DEF_CFA_EXPR:
			len = offs_rd_uleb(c);
			if (!offs_cur_need(c, len))
				return false;
			s->cfa_expr = true;
			s->plt = offs_plt_expr(c->p, len);
			c->p += len;
			break;
		default:
			return false;	/* not an x86-64 .eh_frame opcode */
		}
		continue;
advance:
		if (emit && *loc < end)
			offs_emit_state(b, cie, s, *loc);
		*loc += delta * cie->code_align;
		continue;
offset:
		rr = offs_reg_of(s, reg);
		if (rr) {
			rr->how = OFFS_R_AT_CFA;
			rr->off = off;
		}
		continue;
restore:
		/* Back to what the CIE's initial instructions said. */
		rr = offs_reg_of(s, reg);
		if (rr)
			*rr = reg == OFFS_DW_RBP ? cie->init.bp : cie->init.ra;
		continue;
	}
	return !c->err;
}

/*
 * Parse the CIE at offset off of eh (length already read: the record is
 * [body, end)).
 */
static bool offs_parse_cie(struct offs_cie *cie, const u8 *eh, u64 eh_vaddr,
			   const u8 *body, const u8 *end)
{
	struct offs_cur c = { .p = body, .end = end };
	const u8 *aug, *aug_end;
	u64 aug_len;
	u8 version;

	memset(&cie->init, 0, sizeof(cie->init));
	cie->init.plt = -1;
	cie->init.bp.how = OFFS_R_SAME;
	cie->init.ra.how = OFFS_R_SAME;
	cie->fde_enc = OFFS_PE_ABSPTR;
	cie->signal = false;
	cie->has_aug_data = false;
	version = offs_rd_u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return false;
	aug = c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (!offs_cur_need(&c, 1))
		return false;
	aug_end = c.p++;
	if (version == 4) {
		/* address_size, segment_selector_size */
		if (offs_rd_u8(&c) != 8 || offs_rd_u8(&c) != 0)
			return false;
	}
	cie->code_align = offs_rd_uleb(&c);
	cie->data_align = offs_rd_sleb(&c);
	cie->ra_reg = version == 1 ? offs_rd_u8(&c) : offs_rd_uleb(&c);
	if (cie->ra_reg != OFFS_DW_RA || !cie->code_align)
		return false;
	if (aug < aug_end && *aug == 'z') {
		cie->has_aug_data = true;
		aug_len = offs_rd_uleb(&c);
		if (!offs_cur_need(&c, aug_len))
			return false;
		end = c.p + aug_len;	/* the augmentation data */
		for (aug++; aug < aug_end; aug++) {
			struct offs_cur a = { .p = c.p, .end = end };
			u64 ignored;
			u8 enc;

			switch (*aug) {
			case 'R':
				cie->fde_enc = offs_rd_u8(&a);
				break;
			case 'L':
				offs_rd_u8(&a);
				break;
			case 'P':
				enc = offs_rd_u8(&a);
				/* An unknown personality encoding: skip the rest. */
				if (!offs_rd_ptr(&a, enc & ~OFFS_PE_INDIRECT, eh,
						 eh_vaddr, 0, &ignored))
					a.p = end;
				break;
			case 'S':
				cie->signal = true;
				continue;
			default:
				a.p = end;	/* unknown: the rest is skipped */
				break;
			}
			if (a.err)
				return false;
			c.p = a.p;
		}
		c.p = end;
	} else if (aug < aug_end) {
		return false;	/* "eh" and other pre-z augmentations */
	}
	cie->insns = c.p;
	return !c.err;
}

/* ---- the file ---- */

struct offs_elf {
	u64 eh_vaddr;		/* .eh_frame */
	u64 eh_off;
	u64 eh_len;		/* what can be read of it */
	u32 nsegs;
	struct {
		u64 off, vaddr, len;
	} segs[OFFS_CFI_MAX_SEGS];
};

static int offs_find_eh_frame(const struct offs_cfi_src *src,
			      struct offs_elf *elf)
{
	struct elf64_phdr *ph = NULL, *hdr = NULL, *load = NULL;
	u8 fixed[4 + 8];
	struct elf64_hdr eh;
	struct offs_cur c;
	unsigned int i;
	u64 ptr, span;
	int err;

	if (src->size < sizeof(eh))
		return -ENOEXEC;
	err = src->read(src->ctx, 0, &eh, sizeof(eh));
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(*ph) ||
	    !eh.e_phnum || eh.e_phnum > OFFS_CFI_MAX_PHDRS ||
	    eh.e_phoff > src->size ||
	    src->size - eh.e_phoff < (u64)eh.e_phnum * sizeof(*ph))
		return -ENOEXEC;
	ph = offs_cfi_alloc(eh.e_phnum, sizeof(*ph));
	if (!ph)
		return -ENOMEM;
	err = src->read(src->ctx, eh.e_phoff, ph, eh.e_phnum * sizeof(*ph));
	if (err)
		goto out;
	err = -ENOENT;
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hdr = &ph[i];
	if (!hdr || hdr->p_filesz < sizeof(fixed) ||
	    hdr->p_offset > src->size - sizeof(fixed))
		goto out;
	err = src->read(src->ctx, hdr->p_offset, fixed, sizeof(fixed));
	if (err)
		goto out;
	/* .eh_frame_hdr: version 1, then the encoding of eh_frame_ptr. */
	err = -ENOEXEC;
	c.p = fixed + 4;
	c.end = fixed + sizeof(fixed);
	c.err = false;
	if (fixed[0] != 1 ||
	    !offs_rd_ptr(&c, fixed[1], fixed, hdr->p_vaddr, hdr->p_vaddr, &ptr))
		goto out;
	/* The loadable segment that holds .eh_frame says where it is. */
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ptr >= ph[i].p_vaddr &&
		    ptr - ph[i].p_vaddr < ph[i].p_filesz)
			load = &ph[i];
	if (!load || load->p_offset > src->size)
		goto out;
	elf->eh_vaddr = ptr;
	elf->eh_off = ptr - load->p_vaddr + load->p_offset;
	span = load->p_filesz - (ptr - load->p_vaddr);
	if (elf->eh_off > src->size)
		goto out;
	elf->eh_len = min3(span, src->size - elf->eh_off,
			   (u64)OFFS_CFI_MAX_EH_FRAME);
	elf->nsegs = 0;
	for (i = 0; i < eh.e_phnum && elf->nsegs < OFFS_CFI_MAX_SEGS; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		elf->segs[elf->nsegs].off = ph[i].p_offset;
		elf->segs[elf->nsegs].vaddr = ph[i].p_vaddr;
		elf->segs[elf->nsegs].len = ph[i].p_filesz;
		elf->nsegs++;
	}
	err = 0;
out:
	kvfree(ph);
	return err;
}

/*
 * The CIEs parsed so far, by offset, those that failed too: FDEs that
 * share a CIE (every FDE of a file, in practice) parse it once.  Once
 * full, the entry filled longest ago is replaced.
 */
struct offs_cie_cache {
	struct offs_cie e[OFFS_CFI_CIE_CACHE];
	unsigned int n;		/* entries in use */
	unsigned int next;	/* the one to replace next */
};

/* Parse the CIE at off into cie (cie->bad if it cannot be used). */
static void offs_cie_parse(struct offs_builder *b, struct offs_cie *cie,
			   const u8 *eh, u64 eh_len, u64 eh_vaddr, u64 off)
{
	struct offs_cur c = { .p = eh + off, .end = eh + eh_len };
	u64 len, id, loc = 0;
	const u8 *body;

	cie->off = off;
	cie->bad = true;
	len = offs_rd_le(&c, 4);
	if (len == 0xffffffff)
		len = offs_rd_le(&c, 8);
	if (c.err || len < 4 || len > (u64)(c.end - c.p) ||
	    len > OFFS_CFI_MAX_CIE)
		return;
	b->work.cie_parses++;
	if (!offs_charge(b, len))
		return;
	body = c.p;
	id = offs_rd_le(&c, 4);
	if (id != 0 || !offs_parse_cie(cie, eh, eh_vaddr, c.p, body + len))
		return;
	cie->insns_end = body + len;
	c.p = cie->insns;
	c.end = cie->insns_end;
	if (!offs_run(b, false, cie, &c, &cie->init, &loc, 0, eh, eh_vaddr))
		return;
	cie->bad = false;
}

/* The CIE at offset off of .eh_frame, or NULL if it cannot be used. */
static struct offs_cie *offs_cie_of(struct offs_builder *b,
				    struct offs_cie_cache *cache,
				    const u8 *eh, u64 eh_len, u64 eh_vaddr,
				    u64 off)
{
	struct offs_cie *cie;
	unsigned int i;

	for (i = 0; i < cache->n; i++)
		if (cache->e[i].off == off)
			return cache->e[i].bad ? NULL : &cache->e[i];
	if (off >= eh_len)
		return NULL;
	if (cache->n < OFFS_CFI_CIE_CACHE) {
		cie = &cache->e[cache->n++];
	} else {
		cie = &cache->e[cache->next];
		cache->next = (cache->next + 1) % OFFS_CFI_CIE_CACHE;
	}
	offs_cie_parse(b, cie, eh, eh_len, eh_vaddr, off);
	return cie->bad ? NULL : cie;
}

/* One FDE, [p, end) after its CIE pointer, compiled into b. */
static void offs_compile_fde(struct offs_builder *b, const struct offs_cie *cie,
			     const u8 *p, const u8 *end, const u8 *eh,
			     u64 eh_vaddr)
{
	static const struct offs_cfi_rule none = { .kind = OFFS_CFI_NONE };
	struct offs_cur f = { .p = p, .end = end };
	struct offs_cfa_state s;
	u64 pc, range, loc;

	if (!offs_rd_ptr(&f, cie->fde_enc, eh, eh_vaddr, 0, &pc) ||
	    !offs_rd_ptr(&f, cie->fde_enc & OFFS_PE_FORMAT, eh, eh_vaddr, 0,
			 &range) ||
	    !range || pc > U32_MAX || range > U32_MAX - pc)
		return;
	if (cie->has_aug_data)
		offs_cur_skip(&f, offs_rd_uleb(&f));
	if (f.err)
		return;
	s = cie->init;
	loc = pc;
	if (offs_run(b, true, cie, &f, &s, &loc, pc + range, eh, eh_vaddr) &&
	    loc < pc + range)
		offs_emit_state(b, cie, &s, loc);
	/*
	 * After the function no FDE covers the code (frame pointers there),
	 * unless another FDE starts at that address.
	 */
	offs_emit(b, pc + range, offs_rule_index(b, &none), true);
}

/* Compile every FDE of .eh_frame (eh, eh_len bytes at eh_vaddr) into b. */
static void offs_compile(struct offs_builder *b, const u8 *eh, u64 eh_len,
			 u64 eh_vaddr)
{
	struct offs_cie_cache *cache;
	struct offs_cur c = { .p = eh, .end = eh + eh_len };
	struct offs_cie *cie;
	const u8 *body, *end;
	u64 len, id;

	/* About 2 KB: not on the stack of a work item. */
	cache = kmalloc(sizeof(*cache), GFP_KERNEL);
	if (!cache) {
		b->err = -ENOMEM;
		return;
	}
	cache->n = 0;
	cache->next = 0;
	while (c.p < c.end && !b->full && offs_step(b)) {
		len = offs_rd_le(&c, 4);
		if (len == 0xffffffff)
			len = offs_rd_le(&c, 8);
		if (c.err || len == 0)
			break;		/* the terminator, or the end */
		if (len > (u64)(c.end - c.p) || len < 4)
			break;
		body = c.p;
		end = body + len;
		id = offs_rd_le(&c, 4);
		if (id == 0) {		/* a CIE: parsed when an FDE needs it */
			c.p = end;
			continue;
		}
		/* The CIE pointer is relative to where it is stored. */
		if (id > (u64)(body - eh)) {
			c.p = end;
			continue;
		}
		cie = offs_cie_of(b, cache, eh, eh_len, eh_vaddr,
				  (body - eh) - id);
		if (!cie || !offs_charge(b, len)) {
			c.p = end;
			continue;
		}
		offs_compile_fde(b, cie, c.p, end, eh, eh_vaddr);
		c.p = end;
	}
	kfree(cache);
}

/* By address, real rows before gap markers. */
static bool offs_row_less(const struct offs_row *x, const struct offs_row *y)
{
	if (x->pc != y->pc)
		return x->pc < y->pc;
	return x->gap < y->gap;
}

/*
 * Heap sort's sift-down of v into the heap r[0..n) at the hole i, bottom
 * up (as lib/sort.c does): down to a leaf along the larger children, one
 * comparison a level, then up to where v belongs, which is near the
 * bottom for most of the sort.
 */
static void offs_row_sift(struct offs_row *r, u32 i, u32 n, struct offs_row v)
{
	u32 j = i, c;

	/* n <= OFFS_CFI_MAX_ROWS: 2 * j + 2 does not overflow. */
	while ((c = 2 * j + 1) < n) {
		if (c + 1 < n && offs_row_less(&r[c], &r[c + 1]))
			c++;
		r[j] = r[c];
		j = c;
	}
	/* The hole is at leaf j: move it up while its parent is below v. */
	while (j > i && offs_row_less(&r[(j - 1) / 2], &v)) {
		r[j] = r[(j - 1) / 2];
		j = (j - 1) / 2;
	}
	r[j] = v;
}

/*
 * Sort the rows in place (heap sort: no memory, n log n whatever the
 * input), one step per sift so that the build can be checked and
 * rescheduled while 4 million rows are sorted.  Returns b->err.
 */
static int offs_sort_rows(struct offs_builder *b)
{
	struct offs_row *r = b->rows, v;
	u32 n = b->nrows, i;

	if (n < 2)
		return 0;
	for (i = n / 2; i-- > 0;) {
		offs_row_sift(r, i, n, r[i]);
		if (!offs_step(b))
			return b->err;
	}
	for (i = n - 1; i > 0; i--) {
		v = r[i];
		r[i] = r[0];
		offs_row_sift(r, 0, i, v);
		if (!offs_step(b))
			return b->err;
	}
	return 0;
}

/* Sort, keep one row per address (a real one over a gap marker), merge runs. */
static int offs_finish(struct offs_builder *b, struct offs_cfi_table **out)
{
	struct offs_cfi_table *t;
	u32 i, n = 0;
	int last = -1, err;

	err = offs_sort_rows(b);
	if (err)
		return err;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->pcs = offs_cfi_alloc(max(b->nrows, 1U), sizeof(*t->pcs));
	t->rule_idx = offs_cfi_alloc(max(b->nrows, 1U), sizeof(*t->rule_idx));
	t->rules = offs_cfi_alloc(max(b->nrules, 1U), sizeof(*t->rules));
	if (!t->pcs || !t->rule_idx || !t->rules) {
		offs_cfi_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < b->nrows; i++) {
		if (!offs_step(b)) {
			offs_cfi_free(t);
			return b->err;
		}
		/* Sorted: the first row of each address is the one that counts. */
		if (i && b->rows[i - 1].pc == b->rows[i].pc)
			continue;
		if (b->rows[i].rule == last)
			continue;
		t->pcs[n] = b->rows[i].pc;
		t->rule_idx[n] = b->rows[i].rule;
		last = b->rows[i].rule;
		n++;
	}
	if (b->nrules)
		memcpy(t->rules, b->rules, b->nrules * sizeof(*t->rules));
	t->nrows = n;
	t->nrules = b->nrules;
	t->bytes = sizeof(*t) + (size_t)n * (sizeof(*t->pcs) +
					      sizeof(*t->rule_idx)) +
		   (size_t)b->nrules * sizeof(*t->rules);
	*out = t;
	return 0;
}

/*
 * Compile the .eh_frame of the ELF file src into a table (*out, free with
 * offs_cfi_free()).  Returns 0, -ENOEXEC (not an x86-64 ELF file with
 * PT_GNU_EH_FRAME), -ENOENT (no .eh_frame_hdr), -E2BIG (a bound of
 * ucfi.h was hit: the table would be incomplete; work->over if it was the
 * bound on work), -ENOMEM, or the read or check callback's error.  work,
 * if not NULL, gets what the build did.
 */
int offs_cfi_build(const struct offs_cfi_src *src, struct offs_cfi_table **out,
		   struct offs_cfi_work *work)
{
	struct offs_builder b = { .src = src, .seed = get_random_u64() };
	struct offs_elf elf;
	u8 *eh;
	int err;

	*out = NULL;
	err = offs_find_eh_frame(src, &elf);
	if (err)
		goto out;
	err = -ENOMEM;
	eh = offs_cfi_alloc(max(elf.eh_len, 1ULL), 1);
	if (!eh)
		goto out;
	b.work_max = elf.eh_len * OFFS_CFI_WORK_FACTOR + OFFS_CFI_WORK_SLACK;
	err = src->read(src->ctx, elf.eh_off, eh, elf.eh_len);
	if (!err) {
		offs_compile(&b, eh, elf.eh_len, elf.eh_vaddr);
		err = b.err ? b.err : b.full ? -E2BIG : offs_finish(&b, out);
	}
	if (!err) {
		(*out)->nsegs = elf.nsegs;
		memcpy((*out)->segs, elf.segs, sizeof(elf.segs));
	}
	kvfree(eh);
	kvfree(b.rows);
	kvfree(b.rules);
	kvfree(b.hash);
out:
	if (work)
		*work = b.work;
	return err;
}

/* The virtual address of file offset off (in an executable segment). */
bool offs_cfi_vaddr(const struct offs_cfi_table *t, u64 off, u64 *vaddr)
{
	u32 i;

	for (i = 0; i < t->nsegs; i++) {
		if (off >= t->segs[i].off && off - t->segs[i].off < t->segs[i].len) {
			*vaddr = off - t->segs[i].off + t->segs[i].vaddr;
			return true;
		}
	}
	return false;
}

void offs_cfi_free(struct offs_cfi_table *t)
{
	if (!t)
		return;
	kvfree(t->pcs);
	kvfree(t->rule_idx);
	kvfree(t->rules);
	kfree(t);
}

/* The rule for address pc (an ELF virtual address), or NULL: not covered. */
const struct offs_cfi_rule *offs_cfi_lookup(const struct offs_cfi_table *t,
					    u64 pc)
{
	u32 lo = 0, hi = t->nrows, mid;

	if (pc > U32_MAX)
		return NULL;
	/* The last row at or before pc. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->pcs[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	return &t->rules[t->rule_idx[lo - 1]];
}

/* ---- unwinding ---- */

/*
 * The walk of ucfi.h (offs_cfi_unwind_inline()) as a function, for
 * callers whose rule() and read() are not known at compile time (the
 * tests' unwinder, tests/ucfi/cfi-unwind.c).
 */
unsigned int offs_cfi_unwind(const struct offs_unwind_ops *ops,
			     const struct offs_unwind_regs *regs,
			     unsigned long *ips, unsigned int max,
			     struct offs_unwind_out *out)
{
	return offs_cfi_unwind_inline(ops, regs, ips, max, out);
}
