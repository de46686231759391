#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample pprof: a pprof profile (go tool pprof, Pyroscope, Parca).
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

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
function offsample-symbolize names; a file's mapping gets its GNU
build-id when the symbolizer found the file still the one sampled.
Samples carry the labels reason,
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
