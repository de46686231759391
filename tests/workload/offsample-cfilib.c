// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-cfilib.so - a shared library whose only job is to wait in
 * libc under three frames of its own, built like distribution software
 * (-O2, no frame pointers, .eh_frame only).  tests/guest/56-cfi.bats loads
 * many copies of it into offsample-cfihost, then damages the copies'
 * .eh_frame, .eh_frame_hdr and ELF headers on disk while they are mapped:
 * the module compiles its tables from those bytes and unwinds through
 * them.
 *
 *   cfl_outer(fd) -> cfl_middle(fd) -> cfl_inner(fd) -> read(fd)
 *
 * Four more entry points call cfl_inner() from hand-written code whose
 * call-frame information is wrong or absent on purpose (56-cfi.bats):
 *
 *   cfl_bad_cfa    CFA = rsp + 0 at the call: not above the callee's frame
 *   cfl_bad_align  CFA = rsp + 12: misaligned
 *   cfl_bad_expr   CFA as a DWARF expression (DW_CFA_def_cfa_expression)
 *   cfl_nocfi      no FDE at all, but a frame pointer: rbp-linked
 *
 * A stack through the first three ends at that frame (the unwinder counts
 * it); one through cfl_nocfi goes on with frame pointers to the thread's
 * start.
 */
#include <unistd.h>

#define EXPORT __attribute__((noinline, visibility("default")))

/* Keeps each call from being a tail call, whatever the optimiser does. */
volatile int cfl_sink;

EXPORT long cfl_inner(int fd)
{
	char c;
	long n = read(fd, &c, 1);

	cfl_sink++;
	return n;
}

EXPORT long cfl_middle(int fd)
{
	long n = cfl_inner(fd);

	cfl_sink++;
	return n;
}

EXPORT long cfl_outer(int fd)
{
	long n = cfl_middle(fd);

	cfl_sink++;
	return n;
}

/*
 * Each keeps the stack 16-byte aligned at the call (entry rsp is 8 mod
 * 16) and passes fd on in edi.  The .cfi directives describe the CFA
 * wrongly on purpose; the code itself is correct.
 */
#define CFL_ASM_FN(name, body) \
	".globl " #name "\n.type " #name ", @function\n" #name ":\n" \
	body ".size " #name ", .-" #name "\n"

__asm__(".text\n"
	CFL_ASM_FN(cfl_bad_cfa,
		".cfi_startproc\n"
		"sub $8, %rsp\n"
		".cfi_def_cfa_offset 0\n"
		"call cfl_inner@PLT\n"
		"add $8, %rsp\n"
		".cfi_def_cfa_offset 8\n"
		"ret\n"
		".cfi_endproc\n")
	CFL_ASM_FN(cfl_bad_align,
		".cfi_startproc\n"
		"sub $8, %rsp\n"
		".cfi_def_cfa_offset 12\n"
		"call cfl_inner@PLT\n"
		"add $8, %rsp\n"
		".cfi_def_cfa_offset 8\n"
		"ret\n"
		".cfi_endproc\n")
	/* DW_CFA_def_cfa_expression, 2 bytes: DW_OP_breg7 (rsp) 16. */
	CFL_ASM_FN(cfl_bad_expr,
		".cfi_startproc\n"
		"sub $8, %rsp\n"
		".cfi_escape 0x0f, 0x02, 0x77, 0x10\n"
		"call cfl_inner@PLT\n"
		"add $8, %rsp\n"
		".cfi_def_cfa_offset 8\n"
		"ret\n"
		".cfi_endproc\n")
	CFL_ASM_FN(cfl_nocfi,
		"push %rbp\n"
		"mov %rsp, %rbp\n"
		"call cfl_inner@PLT\n"
		"pop %rbp\n"
		"ret\n"));
