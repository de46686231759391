#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample report: a text report of stacks files, samples per reason
# and top stacks.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
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
  offsample report                                # the live table, idle threads left out
  offsample report --by process --reason io,lock rec.stacks
  ssh db1 cat /proc/offsample/stacks | offsample report --top 3
EOF
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
	HIDE_IDLE=1
	gather_inputs r ${files[@]+"${files[@]}"}
	[ "$WSECONDS" != 1 ] || opts+=(--seconds)
	local labels=()
	for f in "${LABELS[@]}"; do labels+=(--label "$f"); done
	lib report ${opts[@]+"${opts[@]}"} "${labels[@]}" -- "${INPUTS[@]}"
}
