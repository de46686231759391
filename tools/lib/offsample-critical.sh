#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample critical: the code whose speed-up frees the most waiting
# (waits caused, from the blocker edges) and where processes run
# serialized (GAPP ranking).
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_critical() {
	cat <<'EOF'
Usage: offsample critical [--by both|waits|gapp] [--keep-reason] [--folded]
                          [FRAME OPTIONS] [FILTERS] [--no-symbolize] [FILE...]

Which code, made faster, frees the most waiting threads, and where a
process runs serialized.  A stack's weight is the sum of two parts
(--by both, the default; --by waits or --by gapp: one of them):

waits  The waiting it caused (the idea of wPerf, Zhou et al., OSDI 2018,
       from samples): every waiter -> holder edge (offsample blockers)
       of m samples puts m on the holder's record (scaled down when the
       waiter's edges have more samples than it has: a wait for any of k
       children has an edge to each, they share it).  Weight arriving at
       a record that itself waits moves on along its own edges: with n
       samples and edges of m1, m2 ... samples, holder i gets the share
       mi / max(n, m1 + m2 + ...), the rest stays.  So a chain of
       waiters ends on the code at its root, and a wait for any of k
       children is split k ways.  Received weight never moves on along
       a run-queue wait (kind cpu): a preempted lock holder keeps its
       waiters' samples on its own code.  Weight counts only where it ends on a
       thread that runs or works (reason cpu, sched, io or fault): a
       chain that ends in a sleep, a network or terminal read, a lock
       with no known holder or a deadlock is no code's to speed up
       (offsample blockers shows it).
gapp   GAPP's criticality (Zhou et al., "GAPP: A Fast Profiler for
       Detecting Serialization Bottlenecks", 2018).  At each tick the
       module counts, per process, its N sampled threads and the A of
       them that are active (running on a CPU, reason cpu, or waiting for
       one, reason sched).  When 0 < A <= N * critical_pct / 100 (module
       parameter, default 50), each active thread's sample weighs 1/A.
       Threads that wait (lock, io, ...) weigh nothing; single-threaded
       processes and kernel threads never do.

Prints one line per stack, highest weight first:

  WEIGHT<TAB>FOLDED STACK

WEIGHT is in samples (3 decimals): waiter samples plus the sum of 1/A
over the stack's own samples; the stack is `offsample collapse`'s folded form without the reason frame
(running and queued samples of the same code add up; --keep-reason
keeps it).
Needs stacks format v3 (module 0.4 or later) with on-CPU sampling on
(parameter oncpu, default 1).  `offsample flamegraph --critical` draws
the same weights.

  --by WHAT        both (default), waits or gapp: the weights above
  --keep-reason    keep the reason (cpu, sched) as the root frame
  --folded         "FOLDED STACK WEIGHT" lines, the input of flamegraph.pl
                   and of other flame graph tools (highest weight first)

Frame options are collapse's (--no-comm, --show LIST, --offsets, --dso,
...; see offsample collapse --help).

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample record -d 30 -o app.stacks -- ./app
  offsample critical app.stacks | head
  offsample flamegraph --critical -o critical.svg app.stacks
EOF
}

# ------------------------------------------------------------ critical

cmd_critical() {
	local files=() c reason=0 folded=0 by=both
	while [ $# -gt 0 ]; do
		if read_opt "$@" || collapse_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_critical; exit 0 ;;
		--keep-reason) reason=1; shift ;;
		--folded) folded=1; shift ;;
		--by | --by=*) optval --by "$@"; by=$OPTVAL; shift "$SHIFTN" ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	[ "$WSECONDS" != 1 ] || usage_error "--seconds does not apply: criticality is a weight, not a time"
	check_by "$by"
	c=$(collapser)
	gather_inputs c ${files[@]+"${files[@]}"}
	crit_weights "$by"
	[ $reason = 1 ] || COPTS=(--no-reason ${COPTS[@]+"${COPTS[@]}"})
	run_script "$c" --critical ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}" > "$WORK/crit" || exit 1
	if [ ! -s "$WORK/crit" ]; then
		case $by in
		gapp) warn "no critical samples: no process had between 1 and critical_pct% of its threads active at a tick" ;;
		waits) warn "no critical samples: no thread waited for a known holder" ;;
		*) warn "no critical samples: no thread waited for a known holder, and no process had between 1 and critical_pct% of its threads active at a tick" ;;
		esac
		return 0
	fi
	# "STACK WEIGHT" -> "WEIGHT<TAB>STACK", highest first (a frame may
	# contain spaces; the weight is the last field); --folded: back to
	# "STACK WEIGHT" in that order.
	awk '{ w = $NF; sub(/ [^ ]*$/, ""); printf "%s\t%s\n", w, $0 }' "$WORK/crit" |
		sort -t "$(printf '\t')" -k1,1gr -k2,2 > "$WORK/ranked"
	if [ $folded = 1 ]; then
		awk -F '\t' '{ print $2 " " $1 }' "$WORK/ranked"
	else
		cat -- "$WORK/ranked"
	fi
}
