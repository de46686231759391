#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample blockers: who holds the locks threads wait for.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_blockers() {
	cat <<'EOF'
Usage: offsample blockers [--folded] [--frames N] [--offsets] [FILTERS]
                          [--no-symbolize] [FILE...]

Who holds the locks threads wait for.  At each sample the module reads
the holder of the user-space lock a blocked thread waits on (a glibc
mutex's owner, the writer of a glibc rwlock, the owner of a
priority-inheritance futex, the thread holding CPython's GIL), validated,
never guessed, and counts
waiter -> holder edges with what the holder was doing at the same tick
(offsample(4), parameter blockers).  This command prints one line per
waiter -> holder pair, most samples first:

  samples=N waiter=TID wcomm=PROCESS wname=THREAD reason=REASON
  kind=mutex|robust|pi|rwlock|gil object=ADDRESS holder=TID hname=THREAD
  hwhat=WHAT chain=TID>TID>... root=TID rname=THREAD rwhat=WHAT
  rframes=FRAME;FRAME;...

hwhat is what the holder did while the waiter waited: its wait reason
(io, lock, sleep, ...; cpu when it was running), running (on a CPU but
not sampled), gone (it exited holding the lock) or unsampled.  chain follows the holder's own waits to the thread
at its root (">cycle" at the end: the threads wait for each other, a
deadlock); rwhat and rframes say what that root holder did (its user
frames, leaf first, else its kernel frames).  Thread ids are as seen
from the pid namespace the stacks were read in; a gone holder's id is
the one the lock word held.

  --folded         merged stacks for a flame graph instead ("--" between
                   the waiter's stack and the holder's, holder frames
                   marked _[w]), as `offsample flamegraph --blockers`
                   draws them
  --frames N       root frames shown (default 5)
  --offsets        frames with their offsets

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample blockers                              # the live table
  offsample blockers --comm mysqld rec.stacks
  offsample flamegraph --blockers -o blockers.svg rec.stacks
EOF
}

# ------------------------------------------------------------ blockers

cmd_blockers() {
	local opts=() files=()
	while [ $# -gt 0 ]; do
		if read_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_blockers; exit 0 ;;
		--folded | --offsets) opts+=("$1"); shift ;;
		--frames | --frames=*) optval --frames "$@"
			is_uint "$OPTVAL" && [ "$OPTVAL" -ge 1 ] && [ "$OPTVAL" -le 64 ] ||
				usage_error "--frames needs a number from 1 to 64, not \"$OPTVAL\""
			opts+=(--frames "$OPTVAL"); shift "$SHIFTN" ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	gather_inputs b ${files[@]+"${files[@]}"}
	lib blockers ${opts[@]+"${opts[@]}"} -- "${INPUTS[@]}"
}
