#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample metrics: Prometheus text for node_exporter's textfile
# collector: the module's health from its statistics, and thread-seconds
# per wait reason from drained windows.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_metrics() {
	cat <<'EOF'
Usage: offsample metrics [-o FILE.prom] [--by cgroup|service] [--force] [WINDOW|DIR...]

Prometheus metrics (text exposition format) for node_exporter's textfile
collector, so that a host can alert on "lock waits doubled" without a
profiling backend:

  offsample_up                      1 when the module is loaded and its
                                    statistics readable (root), else 0
  offsample_module_info, offsample_enabled, offsample_hz,
  offsample_memory_bytes, offsample_table_fill_ratio, ...
                                    the module's parameters and health
  offsample_samples_total{reason}   samples since the module was loaded
  offsample_dropped_total{why}      observations not counted
  offsample_sampler_cpu_seconds_total, offsample_ticks_total, ... (counters)
  offsample_thread_seconds_total{reason[,cgroup|service]}
                                    thread-seconds (samples / hz) in the
                                    drained WINDOWs counted so far
  offsample_windows_total, offsample_window_end_timestamp_seconds

WINDOW is a drained file (offsample snapshot DIR writes one per run;
offsample record too); DIR stands for the snapshots in it
(offsample-*.stacks; none is no window).  With -o FILE the thread-seconds go on from what
FILE says, and windows that ended before the last one counted there are
not counted again: give it the whole snapshot directory every time.  FILE
is written to a temporary file in its directory first and then renamed,
as the textfile collector asks.  Without -o (or -o -) the text goes to
standard output and only the WINDOWs given are counted.

  --by cgroup      one thread-seconds series per reason and cgroup path
  --by service     per reason and systemd unit (the deepest .service, else
                   .scope, in the cgroup path; "-" if none)
  --force          count a window cut short or damaged (a warning)

Keep the label sets small: every distinct cgroup is a time series.

Example (cron, every minute):
  offsample snapshot --keep 60 /var/lib/offsample &&
  offsample metrics -o /var/lib/prometheus/node-exporter/offsample.prom \
      /var/lib/offsample

Exit status: 0 written (also when the module is not loaded: offsample_up
0), 1 a window that cannot be read, is not a drained window or is cut
short, or FILE cannot be written, 2 usage error.
EOF
}

# ------------------------------------------------------------ metrics

cmd_metrics() {
	local out=- by= files=() args=() stats= f
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) help_metrics; exit 0 ;;
		-o | -o?* | --output | --output=*) optval -o "$@"; out=$OPTVAL; shift "$SHIFTN"
			[ -n "$out" ] || usage_error "-o needs a file name" ;;
		--by | --by=*) optval --by "$@"; by=$OPTVAL; shift "$SHIFTN"
			case $by in
			cgroup | service) ;;
			*) usage_error "--by needs cgroup or service, not \"$by\"" ;;
			esac ;;
		--force) FORCE=1; shift ;;
		--) shift; files+=("$@"); break ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	# A directory: the snapshots in it (offsample snapshot's names).
	local given=("${files[@]+"${files[@]}"}")
	files=()
	for f in ${given[@]+"${given[@]}"}; do
		if [ -d "$f" ]; then
			[ -r "$f" ] && [ -x "$f" ] || die "cannot read $f: permission denied"
			for f in "$f"/offsample-*.stacks; do
				[ -f "$f" ] && files+=("$f")
			done
		else
			files+=("$f")
		fi
	done
	if [ ${#files[@]} -gt 0 ]; then
		input_files "${files[@]}"
		for f in "${files[@]}"; do
			[ "$f" != - ] || usage_error "WINDOWs are files (standard input is not a window)"
		done
		# A window cut short stops here (--force: a warning).
		local chk=()
		for f in "${files[@]}"; do chk+=("$f" "$f"); done
		check_inputs "${chk[@]}"
	fi
	[ -r "$PROC/stats" ] && stats=$PROC/stats
	args=(${stats:+--stats "$stats"} ${by:+--by "$by"})
	if [ "$out" = - ]; then
		perl_helper offsample-metrics.pl ${args[@]+"${args[@]}"} -- ${files[@]+"${files[@]}"}
		return
	fi
	local dir tmp
	dir=$(dirname -- "$out")
	[ -d "$dir" ] || die "$dir: no such directory"
	[ -w "$dir" ] || die "cannot write to $dir: permission denied"
	[ ! -d "$out" ] || die "$out: is a directory"
	[ ! -e "$out" ] || args+=(--prev "$out")
	# The collector reads *.prom: the temporary name does not end so.
	tmp=$(mktemp "$dir/.offsample-metrics.XXXXXX" 2>/dev/null) || die "cannot create a file in $dir"
	if ! perl_helper offsample-metrics.pl ${args[@]+"${args[@]}"} -- ${files[@]+"${files[@]}"} > "$tmp"; then
		rm -f -- "$tmp"
		exit 1
	fi
	chmod 644 -- "$tmp" 2>/dev/null || true
	mv -f -- "$tmp" "$out" 2>/dev/null || { rm -f -- "$tmp"; die "cannot write $out"; }
}
