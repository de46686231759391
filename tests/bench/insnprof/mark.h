/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mark of the insnprof plugin (insnprof.c): a user address whose
 * page offsample-insnmark (mark.c) maps and executes, and whose
 * execution the plugin watches for.
 */
#ifndef OFFS_INSNPROF_MARK_H
#define OFFS_INSNPROF_MARK_H

#define MARK_VADDR	0x7e5700000000ULL

#endif
