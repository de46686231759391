#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample collapse: folded stacks for flame graph tools.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

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
	[ "$WSECONDS" != 1 ] || COPTS+=(--seconds)
	run_script "$c" ${COPTS[@]+"${COPTS[@]}"} -- "${INPUTS[@]}"
}
