#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample flamegraph: an SVG flame graph coloured by wait reason; its
# output helpers serve offsample diff too.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash


help_flamegraph() {
	cat <<'EOF'
Usage: offsample flamegraph [-o FILE] [--engine ENGINE] [--title TEXT]
                            [FRAME OPTIONS] [FILTERS] [--samples] [FILE...]
                            [-- RENDERER OPTIONS]

Collapse the stacks (stackcollapse-offsample --kernel-suffix) and render
an SVG flame graph, written to FILE or to standard output (refused when
it is a terminal).  User frames (format v2) are named by
offsample-symbolize first, as for collapse; they sit between the process
name and the kernel frames.  Frames are coloured by wait reason; on-CPU
samples (reason cpu, module 0.4) in hot reds and oranges, so one graph
shows where threads run and where they wait; the legend gives each
reason's share of the samples.

  -o, --output FILE   write the SVG to FILE (replaced atomically)
  --engine ENGINE     offsample (default): our offsample-flamegraph with
                      --colors=offcpu (hue per wait reason);
                      flamegraph.pl: Brendan Gregg's, from $FLAMEGRAPH_DIR
                      or PATH, with --colors=io
  --title TEXT        title (default: "Off-CPU time: HOST, KERNEL, DURATION",
                      "Off- and on-CPU time: ..." when running threads were
                      sampled too)
  --show LIST         add frames: pid, tid, tname, cgroup, wobj, dso; and
                      the frame options of collapse: --no-reason --no-comm
                      --tname --wobj --sep --offsets --dso --no-modules
                      --no-kernel-suffix
  --samples           widths in samples; default: thread-seconds (samples
                      / hz of each file: files recorded at different
                      rates add up), tooltips in seconds and milliseconds
  --blockers          a graph of who holds the locks threads wait for
                      (offsample blockers --folded): each waiter's stack,
                      a "[waits for KIND]" frame, then its holder's stack at the same
                      ticks, leaf first, in the chain palette (holder
                      frames aqua); widths are waiter samples
  --critical          widths are critical weights (offsample critical):
                      the waiting a stack's code caused, plus GAPP's
                      weight (it ran while few of its process's threads
                      were active)
  --by WHAT           with --critical: both (default), waits or gapp
  -- OPTIONS          passed to the renderer, e.g. -- --width 1600 --reverse

The SVG is rendered into a temporary file first: nothing is written when
anything fails.

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample flamegraph -o offcpu.svg           # idle kernel threads left out
  offsample flamegraph --show cgroup,wobj -o host.svg rec.stacks
  ssh db1 cat /proc/offsample/stacks | offsample flamegraph -o db1.svg
  offsample flamegraph --critical -o critical.svg app.stacks
EOF
}

# write_out FILE OUT: FILE to OUT atomically (OUT "" or "-": stdout).
write_out() {
	local src=$1 out=$2 tmp
	if [ -z "$out" ] || [ "$out" = - ]; then
		cat -- "$src" || die "write error"
		return 0
	fi
	tmp=$(mktemp "$(dirname -- "$out")/.offsample-out.XXXXXX" 2>/dev/null) || die "cannot write $out"
	if ! cat -- "$src" > "$tmp" || ! chmod 0644 -- "$tmp" || ! mv -f -- "$tmp" "$out"; then
		rm -f -- "$tmp"
		die "cannot write $out"
	fi
}

# graph_opt ARGS...: -o FILE and --title TEXT of flamegraph and diff, in
# G_OUT and G_TITLE; sets SHIFTN, returns 1 if $1 is neither.
G_OUT= G_TITLE=
graph_opt() {
	case $1 in
	-o | -o?* | --output | --output=*) optval -o "$@"; G_OUT=$OPTVAL
		[ -n "$G_OUT" ] || usage_error "-o needs a file name" ;;
	--title | --title=*) optval --title "$@"; G_TITLE=$OPTVAL ;;
	*) return 1 ;;
	esac
}

# check_out OUT BINARY: OUT can be written; stdout is not a terminal for
# BINARY (an SVG) output without OUT.
check_out() {
	local out=$1 what=$2 od
	if [ -n "$out" ] && [ "$out" != - ]; then
		[ ! -d "$out" ] || die "$out is a directory"
		od=$(dirname -- "$out")
		[ -d "$od" ] && [ -w "$od" ] || die "cannot write $out"
	elif [ -n "$what" ] && [ -t 1 ]; then
		usage_error "will not write $what to a terminal; use -o FILE or a redirection"
	fi
}

# ------------------------------------------------------------ flamegraph

cmd_flamegraph() {
	local engine=offsample ropts=() files=() out title blk=0 crit=0 by=
	while [ $# -gt 0 ]; do
		if read_opt "$@" || collapse_opt "$@" || graph_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_flamegraph; exit 0 ;;
		--blockers) blk=1; shift ;;
		--critical) crit=1; shift ;;
		--by | --by=*) optval --by "$@"; by=$OPTVAL; shift "$SHIFTN" ;;
		--engine | --engine=*) optval --engine "$@"; engine=$OPTVAL; shift "$SHIFTN" ;;
		--) shift; ropts=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	out=$G_OUT title=$G_TITLE
	local fgpl= rend= c
	case $engine in
	offsample | offsample-flamegraph) engine=offsample; rend=$(renderer) ;;
	flamegraph.pl | flamegraph)
		engine=flamegraph.pl
		if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -f "$FLAMEGRAPH_DIR/flamegraph.pl" ]; then
			fgpl=$FLAMEGRAPH_DIR/flamegraph.pl
		else
			fgpl=$(command -v flamegraph.pl 2>/dev/null) ||
				die "flamegraph.pl not found: set FLAMEGRAPH_DIR to a FlameGraph checkout or put flamegraph.pl on PATH"
		fi ;;
	*) usage_error "--engine must be offsample or flamegraph.pl, not \"$engine\"" ;;
	esac
	[ -z "$by" ] || check_by "$by"
	c=$(collapser)
	check_out "$out" "an SVG"
	HIDE_IDLE=1
	gather_inputs f ${files[@]+"${files[@]}"}

	local t=$WORK sub= cname=samples units=()
	# Widths in time unless --samples; criticality and blockers are
	# weights and waiter samples.
	[ -n "$WSECONDS" ] || WSECONDS=$((crit == 0 && blk == 0))
	if [ -z "$title" ]; then
		title=$(lib title "${RAW[@]}") || exit 1
	fi
	sub=$(lib title --subtitle "${RAW[@]}" 2>/dev/null) || sub=
	if [ $WSECONDS = 1 ]; then
		COPTS+=(--seconds)
		cname=thread-seconds units=(--seconds)
	fi
	# What the widths are, said in the subtitle.
	if [ $crit = 0 ] && [ $blk = 0 ]; then
		sub="${sub:+$sub; }widths: $cname"
	fi
	if [ $crit = 1 ]; then
		[ $blk = 0 ] || usage_error "--critical and --blockers exclude each other"
		[ $WSECONDS = 0 ] || usage_error "--critical draws weights, not time; --seconds does not apply"
		COPTS+=(--critical)
		cname="critical weight"
		local what
		case ${by:-both} in
		both) what="waits caused and GAPP weights" ;;
		waits) what="waits caused" ;;
		gapp) what="GAPP weights" ;;
		esac
		case $title in
		"Off-CPU time"*) title="Critical path ($what)${title#Off-CPU time}" ;;
		"Off- and on-CPU time"*) title="Critical path ($what)${title#Off- and on-CPU time}" ;;
		esac
		crit_weights "${by:-both}"
	elif [ -n "$by" ]; then
		usage_error "--by goes with --critical"
	fi
	if [ $blk = 1 ]; then
		[ $WSECONDS = 0 ] || usage_error "--blockers counts waiter samples; --seconds is not supported with it"
		[ ${#COPTS[@]} = 0 ] || usage_error "--blockers takes no frame options"
		case $title in
		"Off-CPU time"*) title="Blockers: waiter -- holder${title#Off-CPU time}" ;;
		"Off- and on-CPU time"*) title="Blockers: waiter -- holder${title#Off- and on-CPU time}" ;;
		esac
		lib blockers --folded -- "${INPUTS[@]}" > "$t/folded" || exit 1
		[ -s "$t/folded" ] || die "no waiter -> holder edges in the input (see offsample blockers)"
		if [ "$engine" = offsample ]; then
			run_script "$rend" --colors=chain --countname "waiter samples" --title "$title" \
				${sub:+--subtitle "$sub"} ${ropts[@]+"${ropts[@]}"} "$t/folded" > "$t/svg" || exit 1
		else
			perl -- "$fgpl" --colors=chain --countname="waiter samples" --title "$title" \
				${sub:+--subtitle "$sub"} ${ropts[@]+"${ropts[@]}"} "$t/folded" > "$t/svg" ||
				die "flamegraph.pl failed"
		fi
	elif [ "$engine" = offsample ]; then
		run_script "$c" --kernel-suffix ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}" > "$t/folded" || exit 1
		[ $crit = 0 ] || [ -s "$t/folded" ] || die "no critical samples in the input (see offsample critical --help)"
		run_script "$rend" --colors=offcpu --countname "$cname" ${units[@]+"${units[@]}"} --title "$title" \
			${sub:+--subtitle "$sub"} ${ropts[@]+"${ropts[@]}"} "$t/folded" > "$t/svg" || exit 1
	else
		run_script "$c" ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}" > "$t/folded" || exit 1
		[ $crit = 0 ] || [ -s "$t/folded" ] || die "no critical samples in the input (see offsample critical --help)"
		perl -- "$fgpl" --colors=io --countname="$cname" --title "$title" \
			${sub:+--subtitle "$sub"} ${ropts[@]+"${ropts[@]}"} "$t/folded" > "$t/svg" ||
			die "flamegraph.pl failed"
	fi
	[ -s "$t/svg" ] || die "the renderer wrote nothing"
	write_out "$t/svg" "$out"
}

# ------------------------------------------------------------ diff

# first_hz FILE...: the rate of the first generation that has one.
first_hz() {
	local f v
	for f in "$@"; do
		v=$(lib hdr hz "$f" 2>/dev/null) && { printf '%s' "$v"; return 0; }
	done
}
