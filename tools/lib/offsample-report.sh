#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample report, collapse, pprof, blockers and critical: the reading commands
# that turn stacks files into text, folded stacks and pprof profiles.
# Sourced by tools/offsample (not a command of its own); uses its helpers.
# shellcheck shell=bash

help_report() {
	cat <<'EOF'
Usage: offsample report [--top N] [--by KIND] [--offsets] [FILTERS]
                        [--seconds] [--no-symbolize] [FILE...]

A text report of stacks: header (host, kernel, duration, hz, samples,
dropped), the share of samples per reason, then the top stacks per reason
(or per process, thread, cgroup or wait object) with their share of all
samples and of their group, the processes, wait objects (wobj) and
cgroups that contributed, kernel frames, then user frames after "--".
Every stack is tagged with its reason:

  [I] io  [L] lock  [S] sched (run queue)  [Z] sleep  [N] net  [P] ipc
  [F] fault  [T] stopped  [D] idle  [O] other  [C] cpu  [?] unknown

  --top N          stacks shown per group, and groups detailed with
                   --by process|thread (default 5)
  --by KIND        reason (default), process, thread (needs data
                   recorded with key=tid or key=tname), cgroup, or wobj
                   (the system call, with key=wobj the object waited on;
                   cgroup and wobj need stacks format v2)
  --offsets        show frames with their offsets: kernel +0xoff/0xsize,
                   user func+0xoff (file)
  --seconds        order and percentages by thread-seconds, not samples

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample report --exclude-reason idle          # the live table
  offsample report --by process --reason io,lock rec.stacks
  ssh db1 cat /proc/offsample/stacks | offsample report --top 3
EOF
}

help_pprof() {
	cat <<'EOF'
Usage: offsample pprof [-o OUT] [FILTERS] [--no-symbolize] [FILE...]

Write the stacks as a pprof profile (gzipped profile.proto) for go tool
pprof, Pyroscope, Parca, Grafana, speedscope and other pprof readers.

Two sample types: samples/count and wall/nanoseconds (samples x 1e9/hz of
each generation, so that files recorded at different rates add up; the
profile always has both, --seconds changes nothing); the period type is
wall/nanoseconds.  Kernel frames get the mapping [kernel.kallsyms] (or
[MODULE]) and their function; user frames get their file as mapping and
their file offset as address (pprof tools can symbolize them), and the
function offsample-symbolize names.  Samples carry the labels reason,
state, comm, tname, cgroup and wobj, and the numeric labels pid and tid
where the recording's key has them.

  -o, --output OUT   write to OUT ("-": standard output, the default;
                     refused when it is a terminal)

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample pprof -o offcpu.pb.gz rec.stacks
  go tool pprof -top -sample_index=wall offcpu.pb.gz
  go tool pprof -tagfocus=reason=lock -top offcpu.pb.gz
EOF
}

help_collapse() {
	cat <<'EOF'
Usage: offsample collapse [FRAME OPTIONS] [FILTERS] [--seconds] [FILE...]

Folded stacks ("frame;frame;... count", root first) for any flame graph
tool, by stackcollapse-offsample.  User frames (stacks format v2) not
named yet are named first by offsample-symbolize (if it fails, the raw
frames are used, with a warning).  In the output, a named frame is the
function name, one that could not be named is FILE+0xOFFSET (without
the directory), "(replaced)" or "(missing)" when the file changed or
vanished since the recording.  With --seconds the counts are
thread-seconds with 6 decimals (flamegraph.pl takes them).

Frame options (see stackcollapse-offsample --help):
  --show LIST      add frames: pid, tid, tname, cgroup, wobj (after the
                   reason and process frames), dso (the file after each
                   user function)
  --no-reason, --no-comm, --tname, --wobj, --dso, --sep, --kernel-suffix,
  --offsets, --no-modules   as in stackcollapse-offsample

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample collapse --exclude-reason idle > offcpu.folded
  offsample collapse --show cgroup,wobj --seconds a.stacks b.stacks
EOF
}

help_blockers() {
	cat <<'EOF'
Usage: offsample blockers [--folded] [--frames N] [--offsets] [FILTERS]
                          [--no-symbolize] [FILE...]

Who holds the locks threads wait for.  At each sample the module reads
the holder of the user-space lock a blocked thread waits on (a glibc
mutex's owner, the writer of a glibc rwlock, the owner of a
priority-inheritance futex), validated, never guessed, and counts
waiter -> holder edges with what the holder was doing at the same tick
(offsample(4), parameter blockers).  This command prints one line per
waiter -> holder pair, most samples first:

  samples=N waiter=TID wcomm=PROCESS wname=THREAD reason=REASON
  kind=mutex|robust|pi|rwlock object=ADDRESS holder=TID hname=THREAD
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

help_critical() {
	cat <<'EOF'
Usage: offsample critical [--keep-reason] [FRAME OPTIONS] [FILTERS]
                          [--no-symbolize] [FILE...]

Where a process runs serialized: GAPP's criticality ranking (Zhou et al.,
"GAPP: A Fast Profiler for Detecting Serialization Bottlenecks", 2018).
At each tick the module counts, per process, its N sampled threads and
the A of them that are active (running on a CPU, reason cpu, or waiting
for one, reason sched).  When 0 < A <= N * critical_pct / 100 (module
parameter, default 50: at most half the threads carry the process), each
active thread's sample weighs 1/A: the fewer threads carry the process,
the more its stack weighs.  Threads that wait (lock, io, ...) weigh
nothing; single-threaded processes and kernel threads never do.

Prints one line per stack, highest weight first:

  WEIGHT<TAB>FOLDED STACK

WEIGHT is the sum of 1/A over the stack's samples (3 decimals); the
stack is `offsample collapse`'s folded form without the reason frame
(running and queued samples of the same code add up; --keep-reason
keeps it).
Needs stacks format v3 (module 0.4 or later) with on-CPU sampling on
(parameter oncpu, default 1).  `offsample flamegraph --critical` draws
the same weights.

  --keep-reason    keep the reason (cpu, sched) as the root frame

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
	local files=() c reason=0
	while [ $# -gt 0 ]; do
		if read_opt "$@" || collapse_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_critical; exit 0 ;;
		--keep-reason) reason=1; shift ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	[ $WSECONDS = 0 ] || usage_error "--seconds does not apply: criticality is a weight, not a time"
	c=$(collapser)
	gather_inputs c ${files[@]+"${files[@]}"}
	[ $reason = 1 ] || COPTS=(--no-reason ${COPTS[@]+"${COPTS[@]}"})
	run_script "$c" --critical ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}" > "$WORK/crit" || exit 1
	if [ ! -s "$WORK/crit" ]; then
		warn "no critical samples: no process had between 1 and critical_pct% of its threads active at a tick"
		return 0
	fi
	# "STACK WEIGHT" -> "WEIGHT<TAB>STACK", highest first (a frame may
	# contain spaces; the weight is the last field).
	awk '{ w = $NF; sub(/ [^ ]*$/, ""); printf "%s\t%s\n", w, $0 }' "$WORK/crit" |
		sort -t "$(printf '\t')" -k1,1gr -k2,2
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

# ------------------------------------------------------------ report

cmd_report() {
	local opts=() files=() f
	while [ $# -gt 0 ]; do
		if read_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_report; exit 0 ;;
		--top | --top=*) optval --top "$@"; is_uint "$OPTVAL" && [ "$OPTVAL" -ge 1 ] ||
			usage_error "--top needs a positive number, not \"$OPTVAL\""
			opts+=(--top "$OPTVAL"); shift "$SHIFTN" ;;
		--by | --by=*) optval --by "$@"
			case $OPTVAL in
			reason | process | thread | cgroup | wobj) ;;
			*) usage_error "--by needs reason, process, thread, cgroup or wobj, not \"$OPTVAL\"" ;;
			esac
			opts+=(--by "$OPTVAL"); shift "$SHIFTN" ;;
		--offsets) opts+=(--offsets); shift ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	gather_inputs r ${files[@]+"${files[@]}"}
	[ $WSECONDS = 0 ] || opts+=(--seconds)
	local labels=()
	for f in "${LABELS[@]}"; do labels+=(--label "$f"); done
	lib report ${opts[@]+"${opts[@]}"} "${labels[@]}" -- "${INPUTS[@]}"
}

# ------------------------------------------------------------ collapse

# Options of stackcollapse-offsample that take no value (the frames of a
# folded line).
is_collapse_opt() {
	case $1 in
	--no-reason | --no-comm | --tname | --wobj | --no-wobj | --no-cgroup | \
	--dso | --no-dso | --sep | --kernel-suffix | --no-kernel-suffix | \
	--offsets | --no-offsets | --modules | --no-modules) return 0 ;;
	esac
	return 1
}
# collapse_opt ARGS...: a frame option of collapse and flamegraph (one of
# is_collapse_opt, or --show LIST) into COPTS; sets SHIFTN, returns 1 if
# $1 is none of them.
COPTS=()
collapse_opt() {
	local x
	if is_collapse_opt "$1"; then
		COPTS+=("$1")
		SHIFTN=1
		return 0
	fi
	case $1 in
	--show | --show=*) ;;
	*) return 1 ;;
	esac
	optval --show "$@"
	[ -n "$OPTVAL" ] || usage_error "--show needs a list of frames"
	for x in ${OPTVAL//,/ }; do
		case $x in
		pid | tid | tname | cgroup | wobj | dso) COPTS+=("--$x") ;;
		*) usage_error "--show takes pid, tid, tname, cgroup, wobj or dso, not \"$x\"" ;;
		esac
	done
}

cmd_collapse() {
	local files=() c
	while [ $# -gt 0 ]; do
		if read_opt "$@" || collapse_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_collapse; exit 0 ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	c=$(collapser)
	gather_inputs c ${files[@]+"${files[@]}"}
	[ $WSECONDS = 0 ] || COPTS+=(--seconds)
	run_script "$c" ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}"
}

# ------------------------------------------------------------ pprof

cmd_pprof() {
	local out=- files=() names=() f
	while [ $# -gt 0 ]; do
		if read_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_pprof; exit 0 ;;
		-o | -o?* | --output | --output=*) optval -o "$@"; out=$OPTVAL; shift "$SHIFTN" ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	[ -n "$out" ] || usage_error "-o needs a file name"
	if [ "$out" = - ] && [ -t 1 ]; then
		usage_error "will not write a binary profile to a terminal; use -o FILE or a redirection"
	fi
	# The raw frames (file + offset) make the locations; the symbolized
	# copy of each input, when one can be made, names their functions.
	gather_inputs p ${files[@]+"${files[@]}"}
	if [ $NOSYM = 0 ]; then
		for f in "${INPUTS[@]}"; do names+=(--names "$f"); done
	fi
	pprof_lib -o "$out" ${names[@]+"${names[@]}"} -- "${RAW[@]}"
}
