#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample diff: a differential flame graph of two stacks files.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

# The output options and writer of offsample flamegraph.
# shellcheck source=/dev/null
. "$LIBDIR/offsample-flamegraph.sh" || die "cannot read $LIBDIR/offsample-flamegraph.sh"

help_diff() {
	cat <<'EOF'
Usage: offsample diff [-o FILE] [--folded] [--title TEXT] [FRAME OPTIONS]
                      [FILTERS] [--seconds|--samples] BEFORE AFTER [-- RENDERER OPTIONS]

A differential flame graph of two recordings: the frames have the widths
of AFTER and are coloured by the change from BEFORE: red grew, blue
shrank, the deeper the colour the larger the change (white: unchanged);
stacks only in BEFORE have width zero (swap the files, or use
-- --negate, to see what vanished).  The tooltips give both counts.

  -o, --output FILE   write to FILE (replaced atomically); else standard
                      output (an SVG is refused when it is a terminal)
  --folded            write the folded form instead of an SVG, one line per
                      stack: "frame;frame;... BEFORE AFTER", as
                      difffolded.pl writes it (flamegraph.pl draws it too)
  --title TEXT        title (default "Off-CPU time: BEFORE -> AFTER", or
                      "Off- and on-CPU time: ..." when either has on-CPU
                      samples)
  --seconds, --samples  weigh by thread-seconds (samples / hz: files
                      recorded at different rates compare) or samples;
                      the graph's default is thread-seconds, --folded's
                      samples (a warning says when the rates differ)
  frame options, -- OPTIONS   as for flamegraph

Filters apply to both files.  BEFORE and AFTER are stacks files ("-":
standard input, for one of them).

EOF
	help_read | sed -n '/^Filters/,$p'
	cat <<'EOF'

Examples:
  offsample diff -o change.svg --exclude-reason idle monday.stacks tuesday.stacks
  offsample diff --folded --seconds a.stacks b.stacks > ab.folded
EOF
}

cmd_diff() {
	local folded=0 ropts=() files=() c rend= out title
	while [ $# -gt 0 ]; do
		if read_opt "$@" || collapse_opt "$@" || graph_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_diff; exit 0 ;;
		--folded) folded=1; shift ;;
		--) shift; ropts=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	out=$G_OUT title=$G_TITLE
	[ ${#files[@]} -eq 2 ] || usage_error "diff needs two files, BEFORE and AFTER (${#files[@]} given)"
	[ "${files[0]}" != - ] || [ "${files[1]}" != - ] ||
		usage_error "standard input can be only one of the two files"
	c=$(collapser)
	[ $folded = 1 ] || rend=$(renderer)
	check_out "$out" "$([ $folded = 1 ] || echo "an SVG")"
	local t hza hzb cname=samples sfx=() units=()
	[ $folded = 1 ] || sfx=(--kernel-suffix)
	# The graph weighs by time unless --samples; the folded output (for
	# other programs) by samples unless --seconds.
	[ -n "$WSECONDS" ] || WSECONDS=$((1 - folded))
	if [ $WSECONDS = 1 ]; then
		COPTS+=(--seconds)
		cname=thread-seconds units=(--seconds)
	fi
	gather_inputs a "${files[0]}"
	hza=$(first_hz "${RAW[@]}")
	# On-CPU samples (reason cpu) in either file: the title says so.
	local what="Off-CPU time"
	case $(lib title "${RAW[@]}" 2>/dev/null) in "Off- and on-CPU"*) what="Off- and on-CPU time" ;; esac
	t=$WORK
	run_script "$c" ${sfx[@]+"${sfx[@]}"} ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}" > "$t/a.folded" || exit 1
	gather_inputs b "${files[1]}"
	hzb=$(first_hz "${RAW[@]}")
	case $(lib title "${RAW[@]}" 2>/dev/null) in "Off- and on-CPU"*) what="Off- and on-CPU time" ;; esac
	run_script "$c" ${sfx[@]+"${sfx[@]}"} ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}" > "$t/b.folded" || exit 1
	if [ $WSECONDS = 0 ] && [ -n "$hza" ] && [ -n "$hzb" ] && [ "$hza" != "$hzb" ]; then
		warn "${files[0]} was sampled at $hza Hz, ${files[1]} at $hzb Hz: their sample counts do not compare; --seconds weighs each by 1/hz"
	fi
	# One line per stack of either file: "stack BEFORE AFTER" (the count
	# is the last field; a frame may hold spaces).
	awk '
	{
		n = $NF; k = substr($0, 1, length($0) - length(n) - 1)
		if (!(k in seen)) { seen[k] = 1; order[++m] = k }
		if (FILENAME == ARGV[1]) a[k] = n; else b[k] = n
	}
	END {
		for (i = 1; i <= m; i++) {
			k = order[i]
			printf "%s %s %s\n", k, (k in a) ? a[k] : 0, (k in b) ? b[k] : 0
		}
	}' "$t/a.folded" "$t/b.folded" | sort > "$t/diff.folded" || die "cannot join the stacks"
	if [ $folded = 1 ]; then
		write_out "$t/diff.folded" "$out"
		return 0
	fi
	[ -n "$title" ] || title="$what: ${files[0]/#-/stdin} -> ${files[1]/#-/stdin}"
	run_script "$rend" --colors=offcpu --countname "$cname" ${units[@]+"${units[@]}"} --title "$title" \
		--subtitle "width: ${files[1]/#-/stdin} in $cname; red grew, blue shrank since ${files[0]/#-/stdin}" \
		${ropts[@]+"${ropts[@]}"} "$t/diff.folded" > "$t/svg" || exit 1
	[ -s "$t/svg" ] || die "the renderer wrote nothing"
	write_out "$t/svg" "$out"
}
