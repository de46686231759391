#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The tools on stacks format v3 (module 0.4: on-CPU samples, reason cpu,
# the GAPP critical column), on real captures of tests/guest/59-oncpu.bats
# on 6.12 (key=tname, symbolized):
#   oncpu-spin-v3: ocp-spin (2 threads spinning in ocp_user_spin, main
#     thread in pause) and ocp-kspin (one thread in read(/dev/zero) from
#     ocp_kernel_spin), 4 s at 20 Hz;
#   oncpu-crit-v3: ocp-crit (6 threads taking turns in ocp_crit_section
#     under one mutex) and ocp-par (2 threads spinning in ocp_par_spin).
# The guest test checks the module; this one the tools.

load tools-common

SPIN=$SFIX/oncpu-spin-v3-6.12.117.txt
CRIT=$SFIX/oncpu-crit-v3-6.12.117.txt

setup() {
	T=$BATS_TEST_TMPDIR
	export OFFSAMPLE_PROC=$T/no-module OFFSAMPLE_SYS=$T/no-sys
}

@test "collapse --critical: weights are the critical column, summed per stack, zero left out" {
	run -0 "$SCO" --critical "$CRIT"
	# The sum of the folded weights is the sum of the column (to rounding).
	want=$(awk -F'\t' '!/^#/ { s += $12 } END { printf "%.3f", s }' "$CRIT")
	got=$(printf '%s\n' "${lines[@]}" | awk '{ s += $NF } END { printf "%.3f", s }')
	echo "column $want folded $got"
	awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; exit !(d < 0.01 && d > -0.01) }'
	# Only active samples weigh: every line's root is cpu or sched.
	refute_output --regexp '^(lock|sleep|ipc|io|net|idle|other|fault|stopped);'
	# ocp-par (3 threads, 2 active) was never critical at 50%.
	refute_output --partial ';ocp-par;'
	[ "$(awk -F'\t' '!/^#/ && $6 == "ocp-par" && $12 != "0.000"' "$CRIT" | wc -l)" = 0 ]
	# Weights are decimals with at most 3 places.
	run -1 grep -Ev ' [0-9]+(\.[0-9]{1,3})?$' <<< "$output"
}

@test "collapse --critical: clear errors for v2 data and with --seconds" {
	run -1 "$SCO" --critical "$SFIX/workload-drain-v2-6.12.117.txt"
	assert_output --partial 'needs stacks format v3 (a critical column'
	run -2 "$SCO" --critical --seconds "$CRIT"
	assert_output --partial '--critical and --seconds exclude each other'
}

@test "critical: weight TAB stack, highest first, the serialized section on top" {
	run -0 "$OFFS" critical --no-symbolize "$CRIT"
	first=${lines[0]}
	echo "$first"
	[[ "$first" =~ ^[0-9]+(\.[0-9]+)?$'\t'ocp-crit\; ]]
	[[ "$first" == *";crit_fn;ocp_crit_section"* ]]
	# Sorted by weight, descending.
	printf '%s\n' "${lines[@]}" | cut -f1 | sort -grc
	# No reason frame by default; --keep-reason keeps it.
	refute_output --regexp $'\t(cpu|sched);'
	# GAPP weighs active threads only: running (cpu) and queued (sched).
	run -0 "$OFFS" critical --by gapp --keep-reason --no-symbolize "$CRIT"
	run -0 awk -F'\t' '$2 !~ /^(cpu|sched);/' <<< "$output"
	[ -z "$output" ]
	# Filters apply: only ocp-par's samples, none critical (a warning).
	run -0 "$OFFS" critical --no-symbolize --comm ocp-par "$CRIT"
	assert_output 'offsample critical: warning: no critical samples: no thread waited for a known holder, and no process had between 1 and critical_pct% of its threads active at a tick'
	run -0 "$OFFS" critical --by gapp --no-symbolize --comm ocp-par "$CRIT"
	assert_output 'offsample critical: warning: no critical samples: no process had between 1 and critical_pct% of its threads active at a tick'
}

@test "critical --folded: the same stacks and weights as \"STACK WEIGHT\" lines flamegraph.pl reads" {
	run -0 "$OFFS" critical --no-symbolize "$CRIT"
	local ranked=$output
	run -0 "$OFFS" critical --folded --no-symbolize "$CRIT"
	# flamegraph.pl's input regex takes every line; the order is kept.
	run -0 grep -cvP "$FOLDED_RE" <<< "$output" || true
	assert_output 0
	run -0 "$OFFS" critical --folded --no-symbolize "$CRIT"
	assert_equal "$(awk '{ w = $NF; sub(/ [^ ]*$/, ""); print w "\t" $0 }' <<< "$output")" "$ranked"
	printf '%s\n' "$output" > "$T/crit.folded"
	run -0 "$FG" --countname weight "$T/crit.folded"
	assert_output --partial 'data-n="ocp_crit_section"'
}

@test "critical: --seconds refused, v2 input refused with the reason" {
	run -2 "$OFFS" critical --seconds "$CRIT"
	assert_output --partial 'criticality is a weight, not a time'
	run -1 "$OFFS" critical --no-symbolize "$SFIX/workload-drain-v2-6.12.117.txt"
	assert_output --partial 'needs stacks format v3'
}

@test "flamegraph --critical: an SVG of the weights; the plain graph colours cpu apart" {
	run -0 "$OFFS" flamegraph --critical --no-symbolize -o "$T/c.svg" "$CRIT"
	grep -q 'Critical path (waits caused and GAPP weights)' "$T/c.svg"
	run -0 "$OFFS" flamegraph --critical --by gapp --no-symbolize -o "$T/g.svg" "$CRIT"
	grep -q 'Critical path (GAPP weights)' "$T/g.svg"
	run -2 "$OFFS" flamegraph --by gapp --no-symbolize -o "$T/x.svg" "$CRIT"
	assert_output --partial '--by goes with --critical'
	grep -q 'critical weight' "$T/c.svg"
	grep -q '<title>ocp_crit_section (' "$T/c.svg"
	run -1 "$OFFS" flamegraph --critical --no-symbolize --comm ocp-par -o "$T/p.svg" "$CRIT"
	assert_output --partial 'no critical samples'
	[ ! -e "$T/p.svg" ]
	run -2 "$OFFS" flamegraph --critical --blockers -o "$T/x.svg" "$CRIT"
	# The ordinary graph: the legend names on-CPU time, in hot colours.
	run -0 "$OFFS" flamegraph --no-symbolize -o "$T/s.svg" "$SPIN"
	grep -q '>cpu (on-CPU) [0-9.]*%<' "$T/s.svg"
	grep -q '<text id="title"[^>]*>Off- and on-CPU time: ' "$T/s.svg"
	# A diff of files with on-CPU samples says so in its title too.
	run -0 "$OFFS" diff --no-symbolize -o "$T/d.svg" "$CRIT" "$SPIN"
	grep -q "<text id=\"title\"[^>]*>Off- and on-CPU time: $CRIT -&gt; $SPIN<" "$T/d.svg"
}

@test "report: the wall-clock breakdown per process, only with on-CPU data" {
	run -0 "$OFFS" report --no-symbolize "$SPIN"
	assert_line --partial 'Wall-clock time by process'
	row=$(printf '%s\n' "${lines[@]}" | awk '$1 == "ocp-spin" && NF == 11')
	echo "$row"
	# The row adds up to 100% (to rounding) from the fixture's counts.
	sum=$(echo "$row" | awk '{ for (i = 3; i <= NF; i++) { v = $i; sub(/%/, "", v); s += v } print int(s + 0.5) }')
	[ "$sum" -ge 99 ] && [ "$sum" -le 101 ]
	cu=$(awk -F'\t' '!/^#/ && $6 == "ocp-spin" && $2 == "cpu" && $8 == "-" { s += $1 } $6 == "ocp-spin" && !/^#/ { t += $1 } END { printf "%.1f%%", 100 * s / t }' "$SPIN")
	[ "$(echo "$row" | awk '{ print $3 }')" = "$cu" ]
	# ocp-kspin runs in the kernel: cpu-kern, not cpu-user.
	krow=$(printf '%s\n' "${lines[@]}" | awk '$1 == "ocp-kspin" && NF == 11')
	[ "$(echo "$krow" | awk '{ print $3 }')" = - ]
	[ "$(echo "$krow" | awk '{ print $4 }')" != - ]
	# v2 data (no cpu samples): no breakdown.
	run -0 "$OFFS" report --no-symbolize "$SFIX/workload-drain-v2-6.12.117.txt"
	refute_output --partial 'Wall-clock time by process'
}

@test "v3 columns survive symbolize, filters and pprof" {
	# A v3 file with its user frames unnamed again: the symbolizer must
	# keep the 12th column.
	run -0 "$ROOT/tools/offsample-symbolize" "$CRIT"
	run -0 awk -F'\t' '!/^#/ && NF != 12' <<< "$output"
	[ -z "$output" ]
	run -0 perl "$ROOT/tools/lib/offsample-select.pl" --comm ocp-crit -o - -- "$CRIT"
	run -0 awk -F'\t' '!/^#/ && (NF != 12 || $6 != "ocp-crit")' <<< "$output"
	[ -z "$output" ]
	run -0 "$OFFS" pprof --no-symbolize -o "$T/p.pb.gz" "$SPIN"
	[ -s "$T/p.pb.gz" ]
}

# A generation of 8 records with known waits: A (1, 14 samples) waits for
# B (2) 10 times and 4 times for a thread running unsampled; B waits for
# C (3), running; P (6) waits for any of its children K1 (4) and K2 (5),
# doing I/O; D (7) and E (8) wait for each other; Q (9) waits for S (10),
# which sleeps; X (11) waits for L (12), a lock holder queued for the CPU
# that R (13) runs on.
waits_input() {
	local r=1 e
	printf '%s\n' '# offsample stacks v4' '# source: drain' '# hostname: h' '# start: 1700000000.000' \
		'# duration: 1.000' '# hz: 10' '# samples: 134' '# records: 13' '# blockers: 10' '# key: comm,pid,tid' \
		'# columns: count reason state pid tid comm tname kstack ustack wobj cgroup critical'
	for e in 'lock S 10 11 a a_wait' 'lock S 10 12 a b_wait' 'cpu R 10 13 a c_run' \
		 'io D 20 21 k1 k1_read' 'io D 22 22 k2 k2_read' 'ipc S 23 23 p p_wait' \
		 'lock S 30 31 d d_wait' 'lock S 30 32 d e_wait' 'lock S 40 41 q q_wait' 'sleep S 40 42 q s_sleep' \
		 'lock S 50 51 x x_wait' 'sched R 50 52 x l_preempted' 'cpu R 60 61 r r_spin'; do
		set -- $e
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\tschedule\t%s;main\t-\t/\t%s\n' "$([ $r = 1 ] && echo 14 || echo 10)" \
			"$1" "$2" "$3" "$4" "$5" "$5" "$6" \
			"$([ $r = 3 ] && echo 1.500 || echo 0.000)"
		r=$((r + 1))
	done
	for e in '1 2 11 12 mutex' '2 3 12 13 mutex' '6 4 23 21 child' '6 5 23 22 child' \
		 '7 8 31 32 mutex' '8 7 32 31 mutex' '9 10 41 42 mutex' \
		 '11 12 51 52 mutex' '12 13 52 61 cpu'; do
		set -- $e
		printf '# blocker: samples=10\tkind=%s\tobject=-\twaiter=%s\twpid=-\twname=w\twrec=%s\tholder=%s\thpid=-\thcomm=-\thname=h\thstate=sampled\threc=%s\n' \
			"$5" "$3" "$1" "$4" "$2"
	done
	# A wait for a thread that ran unsampled: no record to put it on.
	printf '# blocker: samples=4\tkind=mutex\tobject=-\twaiter=11\twpid=-\twname=w\twrec=1\tholder=99\thpid=-\thcomm=-\thname=h\thstate=running\threc=-\n'
}

@test "critical --by waits: the waiting each stack caused, passed along chains, split between children, none on sleepers or deadlocks" {
	waits_input > "$T/w.stacks"
	run -0 "$OFFS" critical --by waits --no-symbolize --no-comm "$T/w.stacks"
	# C's running code frees A and B (10 + 10); each child half of P's
	# wait; B passed everything on; the deadlock (D, E) and the sleeper
	# (S) are no code's to speed up; the preempted holder L keeps X's
	# wait, R gets L's own wait for the CPU.
	assert_equal "${lines[0]}" $'20\tmain;c_run;schedule'
	assert_line $'10\tmain;l_preempted;schedule'
	assert_line $'10\tmain;r_spin;schedule'
	assert_line $'5\tmain;k1_read;schedule'
	assert_line $'5\tmain;k2_read;schedule'
	[ "${#lines[@]}" -eq 5 ]
	# both (the default): plus GAPP's 1.5 on C; gapp: only that.
	run -0 "$OFFS" critical --no-symbolize --no-comm "$T/w.stacks"
	assert_equal "${lines[0]}" $'21.5\tmain;c_run;schedule'
	run -0 "$OFFS" critical --by gapp --no-symbolize --no-comm "$T/w.stacks"
	assert_output $'1.5\tmain;c_run;schedule'
	run -2 "$OFFS" critical --by time "$T/w.stacks"
	assert_output --partial '--by needs both, waits or gapp, not time'
}
