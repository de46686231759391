#!/usr/bin/env bats
# The tools on recordings the guests made: pprof (checked by go tool
# pprof), flamegraph, collapse, report, and the naming of a test
# program's user frames after it exited.  tests/guest/50-tools.bats
# records them in every guest that runs it (setup_file, and the
# offsample-ustack test) and leaves them in its results; this suite reads
# them on the host after the guests, where each tool costs a fraction of
# what it costs under emulation.  What needs the live module (record,
# snapshot, status, top, the filters) stays in the guest suite.
#
# From: 50-tools.bats (tests/run.sh runs this suite after the guests when
# that suite ran; OFFS_RECORDED is the results folder, build/test-results).
#
#   OFFS_RECORDED=build/test-results bats tests/recorded/tools.bats

# OFFS, ROOT; hdr_get, sum_counts, reason_totals_* (tests/lib/stacks.bash)
load ../host/tools-common
load recordings

setup() {
	T=$BATS_TEST_TMPDIR
	: "${OFFS_RECORDED:?the results folder of a guest run (build/test-results)}"
}

@test "pprof of a recording: go tool pprof's totals per reason are the file's; user functions named; a filter on piped input" {
	local go r n rec recs live
	go=$(command -v /usr/lib/go/bin/go || command -v go) || fail "no go: tests/lib/deps.sh test installs golang-go"
	export GOCACHE=$T/gocache
	recs=$(recordings tools-record)
	for rec in $recs; do
		run -0 "$OFFS" pprof -o "$T/p.pb.gz" "$rec"
		run -0 "$go" tool pprof -tags "$T/p.pb.gz"
		assert_output --regexp "reason: Total $(sum_counts "$rec")(\.0| of [0-9]+)?"
		for r in $(awk -F'\t' '!/^#/ { print $2 }' "$rec" | sort -u); do
			n=$(sum_counts "$rec" "\$2 == \"$r\"")
			assert_line --regexp " $n(\.0)? \([ 0-9.]+%\): $r\$"
		done
		# The workload's own functions, named by offsample-symbolize.
		run -0 "$go" tool pprof -top -nodecount=1000 "$T/p.pb.gz"
		assert_line --regexp ' t_mutex$'
		assert_line --regexp ' t_pipe$'
		# The live file as the guest read it, piped in, filtered: only
		# ipc samples.
		live=${rec/tools-record-/tools-live-}
		[ -s "$live" ] || fail "no $live"
		cat "$live" | "$OFFS" pprof --reason ipc -o "$T/ipc.pb.gz"
		run -0 "$go" tool pprof -tags "$T/ipc.pb.gz"
		assert_line --regexp ' \(  100%\): ipc$'
		refute_line --regexp ': (lock|sleep)$'
	done
}

@test "flamegraph FILE > out.svg: valid XML with the workload's frames and reasons; the title from the header" {
	local rec recs f
	recs=$(recordings tools-record)
	for rec in $recs; do
		run --separate-stderr "$OFFS" flamegraph "$rec"
		assert_success
		assert_equal "$stderr" ""
		printf '%s\n' "$output" > "$T/out.svg"
		run -0 xmllint --noout "$T/out.svg"
		for f in osw-sleep osw-pipe osw-mutex do_nanosleep hrtimer_nanosleep sleep ipc lock; do
			grep -q "data-n=\"$f\"" "$T/out.svg" || { echo "no frame $f in $rec"; return 1; }
		done
		grep -Eq 'data-n="(anon_)?pipe_read"' "$T/out.svg"
		grep -Eq 'data-n="(futex_wait_queue|futex_wait_queue_me|__futex_wait|futex_do_wait)"' "$T/out.svg"
		# The title says whether running threads (reason cpu) are in it.
		if [ "$(sum_counts "$rec" '$2 == "cpu"')" -gt 0 ]; then
			grep -q "Off- and on-CPU time: $(hdr_get hostname "$rec"), $(hdr_get kernel "$rec"), " "$T/out.svg"
		else
			grep -q "Off-CPU time: $(hdr_get hostname "$rec"), $(hdr_get kernel "$rec"), " "$T/out.svg"
		fi
	done
}

@test "collapse: totals per reason equal the recording's" {
	local rec recs
	recs=$(recordings tools-record)
	for rec in $recs; do
		run -0 "$OFFS" collapse "$rec"
		printf '%s\n' "$output" > "$T/folded"
		assert_equal "$(reason_totals_folded "$T/folded")" "$(reason_totals_stacks "$rec")"
		run -0 grep -c '^sleep;osw-sleep;.*;do_nanosleep;schedule;__schedule [0-9]*$' "$T/folded"
	done
}

@test "report: reasons present, annotated stacks, idle kernel threads left out and counted" {
	local rec recs
	recs=$(recordings tools-record)
	for rec in $recs; do
		run --separate-stderr "$OFFS" report "$rec"
		assert_success
		assert_equal "$stderr" ""
		assert_line "# kernel: $(hdr_get kernel "$rec")"
		assert_line "# hz: 19"
		assert_line --regexp '^  \[Z\] sleep +[0-9]+ +[0-9.]+% '
		assert_line --regexp '^  \[P\] ipc +[0-9]+ +[0-9.]+% '
		assert_line --regexp '^  \[L\] lock +[0-9]+ +[0-9.]+% '
		assert_line --regexp '^\[L\] lock: [0-9]+ samples'
		assert_line --regexp '^      processes: .*osw-mutex'
		assert_line --regexp '^# left out: [1-9][0-9]* samples of idle kernel threads \(reason idle, [0-9.]+% of all\); --include-idle shows them$'
		refute_line --regexp '^  \[D\] idle '
	done
}

@test "offsample-ustack, recorded in a guest, named after it exited: flame graph, collapse and report" {
	local rec recs f
	recs=$(recordings tools-ustack)
	for rec in $recs; do
		# Raw in the file: file + offset frames.
		run -0 grep -c "	[^	]*/build/offsample-ustack+0x[0-9a-f]*;" "$rec"
		"$ROOT/tools/offsample-symbolize" "$rec" > "$T/us.sym"
		run -0 grep -c '^# symbolized: ' "$T/us.sym"
		run -0 grep -c '	[^	]*do_pread+0x[0-9a-f]* (offsample-ustack);' "$T/us.sym"
		run --separate-stderr "$OFFS" flamegraph -o "$T/us.svg" "$T/us.sym"
		assert_success
		assert_equal "$stderr" ""
		run -0 xmllint --noout "$T/us.svg"
		for f in do_pread worker_io take_lock worker_lock io lock osw-ustack; do
			grep -q "data-n=\"$f\"" "$T/us.svg" || { echo "no frame $f in $rec"; return 1; }
		done
		# Callers above callees, user frames between the process and the kernel.
		run -0 "$OFFS" collapse "$T/us.sym"
		assert_line --regexp '^io;osw-ustack;(.*;)?worker_io;do_pread;entry_SYSCALL_64_after_hwframe;.*;__schedule [0-9]+$'
		assert_line --regexp '^lock;osw-ustack;(.*;)?worker_lock;take_lock;entry_SYSCALL_64_after_hwframe;.*;__schedule [0-9]+$'
		# The report: the system calls, user frames after "--".
		run -0 "$OFFS" report "$T/us.sym"
		assert_line --regexp '^      wobj: .*pread64 [0-9]+'
		assert_line --regexp '^      do_pread \(offsample-ustack\)$'
		assert_line --regexp '^      worker_lock \(offsample-ustack\)$'
		run -0 "$OFFS" report --by wobj "$T/us.sym"
		assert_line --regexp '^  futex +[0-9]+ +[0-9.]+% +[0-9.]+  \[L\]'
	done
}
