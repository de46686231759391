#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample status: is the module loaded, its parameters and statistics.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_status() {
	cat <<'EOF'
Usage: offsample status

Whether the module is loaded, its parameters (enabled, hz, key, max_stacks,
max_depth, kthreads, user_stacks, max_user_depth, thread_cache, cgroup,
and any other it has), and key statistics: ticks, samples by reason,
dropped observations, the current generation, table fill, the sampler's
CPU share and memory; user stack walks and the cgroup filter.

Exit status: 0 loaded, 1 not loaded or not readable (must be root).
EOF
}

# ------------------------------------------------------------ status

cmd_status() {
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) help_status; exit 0 ;;
		-?*) usage_error "unknown option $1" ;;
		*) usage_error "unexpected argument \"$1\"" ;;
		esac
	done
	need_module
	need_read "$PROC/stats"
	lib status "$PROC/stats" "$SYS"
}
