#!/usr/bin/env bats
# The tools against the real module: record a workload, render and report
# it, snapshots partition the samples, parameters are restored, -p keeps
# one process, -c one cgroup, user frames of a test program are named in
# a flame graph after it exited, status says when the module is gone.
#
# The tools' rendering of the recordings (pprof, flamegraph, collapse,
# report, the naming of offsample-ustack's frames) is checked on the host
# after the guests, on the files this suite leaves in its results
# (tests/recorded/tools.bats): under emulation each of them took 10 to
# 45 s.
#
# Nothing here depends on the kernel (the tools read the module's files,
# whose format is the same on every kernel), so `make test` runs each of
# these tests in one guest only: tagged once-1 or once-2, see
# tests/guest/run.sh (OFFS_ONCE).  The module's side of what they use is
# tested in every guest by the other suites.
#
# Kernels: one, test by test (tags once-1 and once-2, below).

load lib

OFFS=$TOP/tools/offsample
SCO=$TOP/tools/stackcollapse-offsample
SCP=$TOP/tools/stackcollapse-procstat

setup_file() {
	load lib
	offs_load hz=19
	workload_start -n 3 sleep pipe mutex
	sleep 1
	REC=$BATS_FILE_TMPDIR/rec.stacks
	local rc=0
	"$OFFS" record -d 5 -o "$REC" 2> "$BATS_FILE_TMPDIR/rec.err" || rc=$?
	echo "$rc" > "$BATS_FILE_TMPDIR/rec.rc"
	cp "$REC" "$ARTIFACTS/tools-record-$KREL.stacks" 2>/dev/null || true
	# The live file as a reader sees it (tests/recorded/tools.bats pipes
	# it into offsample pprof).
	cat $P/stacks > "$ARTIFACTS/tools-live-$KREL.stacks"
}

teardown_file() {
	load lib
	workload_stop
	offs_unload
}

setup() {
	REC=$BATS_FILE_TMPDIR/rec.stacks
	T=$BATS_TEST_TMPDIR
	US_PID=
}

teardown() {
	if [ -n "${US_PID:-}" ]; then
		kill "$US_PID" 2>/dev/null || true
		wait "$US_PID" 2>/dev/null || true
	fi
	slow_disk_teardown osw-slow50
}

# bats test_tags=once-2
@test "record -d 5 -o FILE: a session's window of the workload, with our header, no warning" {
	assert_equal "$(cat "$BATS_FILE_TMPDIR/rec.rc")" 0
	assert_equal "$(cat "$BATS_FILE_TMPDIR/rec.err")" ""
	run -0 head -n1 "$REC"
	assert_output --regexp '^# offsample stacks v[0-9]+$'
	# A session of its own (tests/guest/32-sessions.bats), not a drain.
	assert_equal "$(hdr_get source "$REC")" session
	assert_equal "$(hdr_get hz "$REC")" 19
	assert_equal "$(hdr_get recorded-by "$REC")" "offsample record -d 5 -o $REC"
	assert_equal "$(hdr_get samples "$REC")" "$(sum_counts "$REC")"
	# At least 5 s, plus the time to start the drain (slow under software
	# emulation), with ticks at hz over that time (emulation can delay a
	# tick, never add one).
	ticks=$(hdr_get ticks "$REC"); dur=$(hdr_get duration "$REC")
	run -0 awk -v t="$ticks" -v d="$dur" 'BEGIN { e = 19 * d; print t, d, e; exit !(d >= 4.9 && d < 10 && t >= 0.5 * e && t <= 1.05 * e + 1) }'
	# The workload's waits, with their reasons.
	[ "$(sum_counts "$REC" '$6 == "osw-sleep" && $2 == "sleep"')" -gt 0 ]
	[ "$(sum_counts "$REC" '$6 == "osw-pipe" && $2 == "ipc"')" -gt 0 ]
	[ "$(sum_counts "$REC" '$6 == "osw-mutex" && $2 == "lock"')" -gt 0 ]
	# The sampler is left as it was (loaded enabled, hz 19, key comm).
	assert_equal "$(cat $PARAM/enabled) $(cat $PARAM/hz) $(cat $PARAM/key)" "Y 19 comm"
}

# bats test_tags=once-2
@test "report of the live file: processes with their reasons" {
	# User frames left unnamed: naming every program on the guest costs
	# half a minute under emulation; the report of a recording is checked
	# on the host (tests/recorded/tools.bats).
	run -0 "$OFFS" report --by process --no-symbolize
	assert_line --regexp '^  osw-mutex +[0-9]+ .*\[L\]'
}

# bats test_tags=once-1
@test "status: loaded, parameters and statistics" {
	run --separate-stderr "$OFFS" status
	assert_success
	assert_equal "$stderr" ""
	assert_line --regexp '^module: +loaded, version [0-9.]+, stacks format v[0-9]+$'
	assert_line --regexp '^parameters: +enabled=Y hz=19 key=comm '
	assert_line --regexp '^samples: +[1-9][0-9]* since load$'
	assert_line --regexp '^  \[Z\] sleep +[0-9]+'
	assert_line --regexp '^cpu share: +[0-9.]+% of one CPU'
	assert_line --regexp '^memory: +[0-9.]+ MiB'
	# The v2 parameters.
	assert_line --regexp '^parameters: .* user_stacks=Y max_user_depth=[0-9]+ .*cgroup=""'
	assert_line --regexp '^user stacks: on, up to [0-9]+ frames; [0-9]+ walks, [0-9]+ cut short \(page not in memory\), [0-9]+ busy'
	assert_line 'cgroup:      all (no cgroup filter)'
	# 0.2: bounds and refused opens.
	assert_line --regexp '^bounds: +max_stacks 8192 of [0-9]+ allowed here, thread_cache 65536 of [0-9]+; [0-9]+ of 4 old generations held open'
	assert_line --regexp '^access: +[0-9]+ opens refused'

}

# bats test_tags=once-2
@test "snapshot DIR twice: two files, consecutive generations, partitioned samples" {
	mkdir "$T/snaps"
	sleep 1
	run -0 "$OFFS" snapshot "$T/snaps"
	assert_output ""
	sleep 1
	run -0 "$OFFS" snapshot "$T/snaps"
	assert_output ""
	run -0 ls "$T/snaps"
	assert_equal "${#lines[@]}" 2
	local a=$T/snaps/${lines[0]} b=$T/snaps/${lines[1]} ga gb
	ga=$(hdr_get generation "$a")
	gb=$(hdr_get generation "$b")
	assert_equal "$gb" $((ga + 1))
	[[ "${lines[0]}" == offsample-*-g$(printf '%08d' "$ga").stacks ]]
	# Each is a whole drain: exact header, samples in both.
	assert_equal "$(hdr_get samples "$a")" "$(sum_counts "$a")"
	assert_equal "$(hdr_get samples "$b")" "$(sum_counts "$b")"
	[ "$(sum_counts "$b" '$6 == "osw-sleep"')" -gt 0 ]
	# Two at once: two files, two generations.
	mkdir "$T/both"
	"$OFFS" snapshot "$T/both" & local p1=$!
	"$OFFS" snapshot "$T/both" & local p2=$!
	wait "$p1"
	wait "$p2"
	run -0 ls "$T/both"
	assert_equal "${#lines[@]}" 2
	[ "$(hdr_get generation "$T/both/${lines[0]}")" != "$(hdr_get generation "$T/both/${lines[1]}")" ]
}

# bats test_tags=once-1
@test "record restores enabled, hz and key; -F applies during the recording" {
	echo 0 > $PARAM/enabled
	echo 7 > $PARAM/hz
	run --separate-stderr "$OFFS" record -d 2 -F 23 -o "$T/r2.stacks"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(cat $PARAM/enabled) $(cat $PARAM/hz) $(cat $PARAM/key)" "N 7 comm"
	assert_equal "$(hdr_get hz "$T/r2.stacks")" 23
	[ "$(hdr_get ticks "$T/r2.stacks")" -gt 0 ]
	[ "$(sum_counts "$T/r2.stacks")" -gt 0 ]
	echo 19 > $PARAM/hz
	echo 1 > $PARAM/enabled
}

# bats test_tags=once-2
@test "record -p PID keeps only that process; key restored" {
	local pid
	pid=$(ps -eo pid=,comm= | awk '$2 == "osw-mutex" { print $1; exit }')
	[ -n "$pid" ]
	run --separate-stderr "$OFFS" record -d 2 -p "$pid" -o "$T/p.stacks"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(cat $PARAM/key)" comm
	assert_equal "$(hdr_get pid "$T/p.stacks")" "$pid"
	assert_equal "$(hdr_get samples "$T/p.stacks")" "$(sum_counts "$T/p.stacks")"
	[ "$(sum_counts "$T/p.stacks")" -gt 0 ]
	# Every record is that process's: its pid, its name.
	assert_equal "$(sum_counts "$T/p.stacks" "\$4 != \"$pid\" || \$6 != \"osw-mutex\"")" 0
	[ "$(sum_counts "$T/p.stacks" '$2 == "lock"')" -gt 0 ]
	# The session counted that process alone: nothing filtered after.
	assert_equal "$(hdr_get source "$T/p.stacks")" session
	assert_equal "$(hdr_get unfiltered-samples "$T/p.stacks")" ""
}

# bats test_tags=once-1
@test "record -c CGROUP: only that cgroup's processes; parameters restored" {
	[ -d /sys/fs/cgroup ] && [ -f /sys/fs/cgroup/cgroup.procs ] || skip "no cgroup v2 hierarchy"
	local pid cg=/sys/fs/cgroup/osw-tools before
	pid=$(ps -eo pid=,comm= | awk '$2 == "osw-pipe" { print $1; exit }')
	[ -n "$pid" ]
	mkdir -p "$cg"
	echo "$pid" > "$cg/cgroup.procs"
	before=$(cat $PARAM/key; cat $PARAM/cgroup 2>/dev/null || true)
	run --separate-stderr "$OFFS" record -d 2 -c osw-tools -o "$T/c.stacks"
	local rc=$status err=$stderr
	echo "$pid" > /sys/fs/cgroup/cgroup.procs
	rmdir "$cg"
	assert_equal "$rc" 0
	assert_equal "$err" ""
	assert_equal "$(cat $PARAM/key; cat $PARAM/cgroup 2>/dev/null || true)" "$before"
	assert_equal "$(hdr_get cgroup "$T/c.stacks")" /osw-tools
	[ "$(sum_counts "$T/c.stacks")" -gt 0 ]
	# Only osw-pipe's threads (the session counts only that subtree).
	assert_equal "$(hdr_get cgroup-filter "$T/c.stacks")" session
	assert_equal "$(sum_counts "$T/c.stacks" '$6 != "osw-pipe"')" 0
	[ "$(sum_counts "$T/c.stacks" '$2 == "ipc"')" -gt 0 ]
	# The cgroup column says so too.
	assert_equal "$(awk -F'\t' '!/^#/ { print $11 }' "$T/c.stacks" | sort -u)" /osw-tools
	# A group that does not exist: one clear line, nothing changed.
	run --separate-stderr "$OFFS" record -d 1 -c osw-no-such-group -o "$T/none.stacks"
	assert_failure 1
	assert_output ""
	assert_regex "$stderr" '^offsample record: no such cgroup: /osw-no-such-group \(.*\)$'
	assert_equal "$(cat $PARAM/key; cat $PARAM/cgroup)" "$before"
	[ ! -e "$T/none.stacks" ] || false
}

# bats test_tags=once-2
@test "record -- COMMAND: the command and its children only, until it exits" {
	[ -f /sys/fs/cgroup/cgroup.procs ] || skip "no cgroup v2 hierarchy"
	local before out=$T/cmd.stacks n
	before=$(cat $PARAM/key; cat $PARAM/cgroup)
	# Two sleeping children for 3 s, the shell waiting for them; the
	# workload (osw-*) keeps running outside.
	run --separate-stderr "$OFFS" record -o "$out" -- sh -c 'echo started; sleep 3 & sleep 3 & wait; exit 3'
	assert_success
	assert_output started
	assert_equal "$stderr" "offsample record: warning: sh -c 'echo started; sleep 3 & sleep 3 & wait; exit 3' exited with status 3"
	assert_equal "$(cat $PARAM/key; cat $PARAM/cgroup)" "$before"
	[ -z "$(find /sys/fs/cgroup -maxdepth 1 -name 'offsample-record-*')" ]
	assert_equal "$(hdr_get command "$out")" "sh -c 'echo started; sleep 3 & sleep 3 & wait; exit 3'"
	assert_equal "$(hdr_get command-exit "$out")" 3
	assert_regex "$(hdr_get cgroup "$out")" '^/offsample-record-[0-9]+$'
	# Only the command's processes, keyed by pid.  The process that
	# becomes the command enters the group before its exec and is named
	# "offsample" until then: a tick in that window counts it (seen once,
	# 1 sample, on 6.1, 2026-11-25).
	assert_equal "$(sum_counts "$out" '$6 != "sh" && $6 != "sleep" && $6 != "offsample"')" 0
	assert_equal "$(awk -F'\t' '!/^#/ && $6 == "sleep" { print $4 }' "$out" | sort -u | wc -l)" 2
	# Two threads asleep for 3 s at 19 Hz: 114 samples, within 30%.
	n=$(sum_counts "$out" '$6 == "sleep" && $2 == "sleep"')
	[ "$n" -ge 80 ] && [ "$n" -le 150 ] || { echo "sleep samples: $n"; false; }
	[ "$(sum_counts "$out" '$6 == "sh"')" -gt 0 ]
	# A child left running: moved out, the group removed, a warning.
	run --separate-stderr "$OFFS" record -o "$T/left.stacks" -- sh -c 'sleep 60 > /dev/null 2>&1 & exit 0'
	local rc=$status err=$stderr
	pkill -f '^sleep 60$' || true
	assert_equal "$rc" 0
	assert_regex "$err" '^offsample record: warning: 1 process\(es\) of the command still run; moved back to /'
	[ -z "$(find /sys/fs/cgroup -maxdepth 1 -name 'offsample-record-*')" ]
	assert_equal "$(cat $PARAM/key; cat $PARAM/cgroup)" "$before"
}

# bats test_tags=once-1
@test "offsample-ustack recorded by pid: its user frames raw, as file and offset" {
	local dev
	dev=$(slow_disk_setup osw-slow50)
	start_ustack "$TOP/build/offsample-ustack" "$dev" "$T/us.out"
	sleep 1
	run --separate-stderr "$OFFS" record -d 3 -p "$US_PID" -o "$T/us.stacks"
	assert_success
	assert_equal "$stderr" ""
	kill "$US_PID"
	wait "$US_PID" || true
	US_PID=
	# Named after the process exited, on the host: tests/recorded/tools.bats.
	cp "$T/us.stacks" "$ARTIFACTS/tools-ustack-$KREL.stacks"
	# Raw in the file: file + offset frames (their "# file:" identity
	# lines are checked by 55-user.bats).
	run -0 grep -c "	$TOP/build/offsample-ustack+0x[0-9a-f]*;" "$T/us.stacks"
	run -0 awk -F'\t' '!/^#/ && $6 == "osw-ustack" { n++ } END { print n + 0; exit !n }' "$T/us.stacks"
}

# bats test_tags=once-2
@test "top -n 2: each refresh is a session's window: the samples of the interval" {
	# Kernel frames are checked: user frames unnamed (naming is tested on
	# the host, tools-record.bats).  A drain between the refreshes
	# changes nothing for top (its own session, tests/guest/32-sessions.bats).
	( sleep 1.5; cat $P/drain > /dev/null ) 3>&- &
	run --separate-stderr "$OFFS" top -n 2 -i 1 --no-symbolize
	assert_success
	assert_equal "$stderr" ""
	refute_output --partial 'generation changed'
	assert_line --index 1 --regexp '^last [0-9.]+ s: [0-9]+\.[0-9]{2} thread-s \([0-9]+ samples\), [0-9]+ ticks at 19 Hz$'
	assert_line --regexp '^last [0-9.]+ s: [0-9]+\.[0-9]{2} thread-s \([1-9][0-9]* samples\), [1-9][0-9]* ticks at 19 Hz$'
	assert_line --regexp '\[Z\] osw-sleep +do_nanosleep < hrtimer_nanosleep'
}

# bats test_tags=once-1
@test "stackcollapse-procstat on the live threads file" {
	run --separate-stderr "$SCP" $P/threads
	assert_success
	assert_equal "$stderr" ""
	assert_line --regexp '^sleep;osw-sleep;.*do_nanosleep;schedule;__schedule [0-9]+$'
	assert_line --regexp '^lock;osw-mutex;.*;schedule;__schedule 3$'
}

# bats test_tags=once-2
@test "status after unload: not loaded, exit 1" {
	workload_stop
	offs_unload
	run --separate-stderr "$OFFS" status
	assert_failure 1
	assert_output ""
	assert_regex "$stderr" "^offsample status: module not loaded"
	run --separate-stderr "$OFFS" record -d 1 -o "$T/none.stacks"
	assert_failure 1
	[ ! -e "$T/none.stacks" ]
}
