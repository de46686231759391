#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample blockers: who holds the locks threads wait for.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_blockers() {
	cat <<'EOF'
Usage: offsample blockers [--folded | --dot | --graph -o FILE.svg]
                          [--frames N] [--offsets] [FILTERS]
                          [--no-symbolize] [FILE...]

Who holds the locks threads wait for.  At each sample the module reads
the holder of the user-space lock a blocked thread waits on (a glibc
mutex's owner, the writer of a glibc rwlock, the owner of a
priority-inheritance futex, the thread holding CPython's GIL) and of
waits in the kernel (a child, the thread on the waiter's CPU, mmap_lock's
writer, an rt_mutex's owner, a socket's or pipe's other end, a file
lock), validated, never guessed, and counts
waiter -> holder edges with what the holder was doing at the same tick
(offsample(4), parameter blockers).  This command prints one line per
waiter -> holder pair, most samples first:

  samples=N waiter=TID wcomm=PROCESS wname=THREAD reason=REASON
  kind=KIND object=OBJECT holder=TID hname=THREAD
  hwhat=WHAT chain=TID>TID>... root=TID rname=THREAD rwhat=WHAT
  rframes=FRAME;FRAME;...

hwhat is what the holder did while the waiter waited: its wait reason
(io, lock, sleep, ...; cpu when it was running), running (on a CPU but
not sampled), gone (it exited holding the lock) or unsampled; a wait
that names no holder has holder=? and hwhat=unknown:WHY (nobody, nopeer,
invalid, kernel, ...: docs/FORMAT.md).  chain follows the holder's own waits to the thread
at its root (">cycle" at the end: the threads wait for each other, a
deadlock); rwhat and rframes say what that root holder did (its user
frames, leaf first, else its kernel frames).  Thread ids are as seen
from the pid namespace the stacks were read in; a gone holder's id is
the one the lock word held.

  --folded         merged stacks for a flame graph instead (a "[waits for
                   KIND]" frame between the waiter's stack and the
                   holder's, holder frames marked _[w]), as `offsample
                   flamegraph --blockers` draws them
  --dot            the wait-for graph in Graphviz's language: threads
                   (boxed by process) and waiter -> holder edges by
                   kind, weighted in thread-seconds; a cycle of waits
                   (a deadlock) in red; --max-edges N (default 60)
                   keeps the heaviest pairs, --title TEXT names it
  --graph          that graph drawn as an SVG by Graphviz's dot(1)
                   (Debian: graphviz), to -o FILE or standard output
  --frames N       root frames shown (default 5)
  --offsets        frames with their offsets

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample blockers                              # the live table
  offsample blockers --comm mysqld rec.stacks
  offsample flamegraph --blockers -o blockers.svg rec.stacks
  offsample blockers --graph -o waits.svg rec.stacks
EOF
}

# ------------------------------------------------------------ blockers

cmd_blockers() {
	local opts=() files=() graph=0 out=
	while [ $# -gt 0 ]; do
		if read_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_blockers; exit 0 ;;
		--folded | --offsets | --dot) opts+=("$1"); shift ;;
		--graph) graph=1; shift ;;
		-o | -o?* | --output | --output=*) optval -o "$@"; out=$OPTVAL
			[ -n "$out" ] || usage_error "-o needs a file name"
			shift "$SHIFTN" ;;
		--max-edges | --max-edges=*) optval --max-edges "$@"
			is_uint "$OPTVAL" && [ "$OPTVAL" -ge 1 ] && [ "$OPTVAL" -le 10000 ] ||
				usage_error "--max-edges needs a number from 1 to 10000, not \"$OPTVAL\""
			opts+=(--max-edges "$OPTVAL"); shift "$SHIFTN" ;;
		--title | --title=*) optval --title "$@"; opts+=(--title "$OPTVAL"); shift "$SHIFTN" ;;
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
	if [ $graph = 1 ]; then
		# write_out, check_out
		. "$LIBDIR/offsample-flamegraph.sh" || die "cannot read $LIBDIR/offsample-flamegraph.sh"
		command -v dot > /dev/null 2>&1 ||
			die "--graph needs Graphviz's dot (Debian: apt-get install graphviz); --dot prints its input"
		check_out "$out" "an SVG"
	elif [ -n "$out" ]; then
		usage_error "-o goes with --graph"
	fi
	gather_inputs b ${files[@]+"${files[@]}"}
	if [ $graph = 0 ]; then
		lib blockers ${opts[@]+"${opts[@]}"} -- "${INPUTS[@]}"
		return
	fi
	lib blockers --dot ${opts[@]+"${opts[@]}"} -- "${INPUTS[@]}" > "$WORK/waits.dot" || exit 1
	dot -Tsvg "$WORK/waits.dot" > "$WORK/waits.svg" 2> "$WORK/dot.err" ||
		die "dot failed: $(head -n 1 "$WORK/dot.err")"
	write_out "$WORK/waits.svg" "$out"
}
