#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# offsample record, snapshot and top against a fake /proc + /sys tree of
# plain files (tools-common.bash): parameters set and restored (also on
# SIGTERM/SIGINT), filters, atomic output, snapshot names, retention and
# overlap, top refreshes and deltas.
#
#   bats tests/host/tools-record.bats

load tools-common

setup() {
	T=$BATS_TEST_TMPDIR
	fake_tree
	mkdir -p "$T/cwd"
	cd "$T/cwd"
}

teardown() {
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; fi
}

params() { echo "$(cat "$FS/enabled") $(cat "$FS/hz") $(cat "$FS/key")"; }

# wait_for CMD...: poll up to 10 s until CMD succeeds
wait_for() {
	local i
	for i in $(seq 1 100); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
no_temp_files() {	# no_temp_files DIR: no leftover temporary file
	run -0 ls -A "$1"
	refute_output --partial ".offsample-"
}

# ------------------------------------------------------------ record

@test "record: sets enabled/hz, resets, drains, writes the file with extra header lines, restores" {
	run --separate-stderr "$OFFS" record -d 0.3 -F 99 -o "$T/out.stacks"
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
	assert_equal "$(params)" "N 9 comm"
	assert_equal "$(cat "$FP/control")" reset
	run -0 head -n1 "$T/out.stacks"
	assert_output "# offsample stacks v1"
	run -0 grep '^# ' "$T/out.stacks"
	assert_line "# recorded-by: offsample record -d 0.3 -F 99 -o $T/out.stacks"
	assert_line "# samples: 1000"
	assert_line "# generation: 7"
	refute_line --partial "# pid:"
	refute_line --partial "warning"
	# The header lines come before "# columns:", which stays last.
	assert_line --index $((${#lines[@]} - 1)) "# columns: count reason state pid tid comm tname kstack"
	# The records are the drain's, unchanged.
	assert_equal "$(grep -v '^#' "$T/out.stacks")" "$(grep -v '^#' "$SMALL")"
	no_temp_files "$T"
}

@test "record: default output offsample.stacks in the cwd; -o - writes to stdout" {
	run -0 "$OFFS" record -d 0.2
	assert_output ""
	[ -s "$T/cwd/offsample.stacks" ]
	run -0 grep -c '^# recorded-by: offsample record -d 0.2$' "$T/cwd/offsample.stacks"
	rm "$T/cwd/offsample.stacks"
	run --separate-stderr "$OFFS" record -d 0.2 -o -
	assert_success
	assert_line --index 0 "# offsample stacks v1"
	assert_line "# recorded-by: offsample record -d 0.2 -o -"
	assert_equal "$(printf '%s\n' "$output" | grep -vc '^#')" 8
	[ ! -e "$T/cwd/offsample.stacks" ]
	no_temp_files "$T/cwd"
	# Parameters the user did not ask to change are not written.
	echo Y > "$FS/enabled"
	touch -d '2020-01-01' "$FS/hz" "$FS/key" "$FS/enabled"
	run -0 "$OFFS" record -d 0.1 -o "$T/x.stacks"
	assert_equal "$(stat -c %Y "$FS/hz" "$FS/key" "$FS/enabled" | sort -u)" "$(date -d 2020-01-01 +%s)"
}

@test "record -p PID: key includes pid while recording, only that process kept, key restored" {
	sed "s/\t100\t/\t$$\t/" "$SMALL" > "$FP/drain"
	"$OFFS" record -d 3 -p $$ -o "$T/p.stacks" 2> "$T/err" &
	BG=$!
	wait_for grep -qx reset "$FP/control"
	assert_equal "$(params)" "1 9 comm,pid"
	wait "$BG"
	BG=
	assert_equal "$(params)" "N 9 comm"
	assert_equal "$(cat "$T/err")" ""
	run -0 grep '^# ' "$T/p.stacks"
	assert_line "# pid: $$"
	assert_line "# samples: 700"
	assert_line "# records: 4"
	assert_line "# unfiltered-samples: 1000"
	assert_line "# unfiltered-records: 8"
	run -0 awk -F'\t' '!/^#/ { print $4 }' "$T/p.stacks"
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u)" "$$"
	assert_equal "${#lines[@]}" 4
	# A key that already has ids is left alone.
	echo comm,tid,tname > "$FS/key"
	run -0 "$OFFS" record -d 0.1 -p $$ -o "$T/p2.stacks"
	assert_equal "$(cat "$FS/key")" "comm,tid,tname"
	# A process without samples: a warning.
	run --separate-stderr "$OFFS" record -d 0.1 -p 1 -o "$T/p3.stacks"
	assert_success
	assert_equal "$stderr" "offsample record: warning: no samples of process 1 were recorded"
	run -0 grep -c '^# samples: 0$' "$T/p3.stacks"
}

@test "record -c CGROUP without module support: key=pid, processes of cgroup.procs kept" {
	mkdir "$T/cg"
	printf '200\n300\n' > "$T/cg/cgroup.procs"
	run --separate-stderr "$OFFS" record -d 0.2 -c "$T/cg" -o "$T/c.stacks"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(params)" "N 9 comm"
	run -0 grep '^# ' "$T/c.stacks"
	assert_line "# cgroup: $T/cg"
	assert_line "# cgroup-filter: processes in cgroup.procs at start or end"
	assert_line "# samples: 200"
	run -0 awk -F'\t' '!/^#/ { print $6 }' "$T/c.stacks"
	assert_output "$(printf 'cron\nWeb Content')"
	run --separate-stderr "$OFFS" record -d 0.2 -c no-such-group-here -o "$T/c2.stacks"
	assert_failure 1
	assert_regex "$stderr" "^offsample record: no such cgroup: /no-such-group-here \\(/.*/no-such-group-here is not a cgroup v2 directory\\)\$"
	assert_equal "${#stderr_lines[@]}" 1
	[ ! -e "$T/c2.stacks" ] || false
}

@test "record -c CGROUP with a module cgroup parameter: written while recording, restored" {
	mkdir "$T/cg"
	: > "$T/cg/cgroup.procs"
	echo "" > "$FS/cgroup"
	"$OFFS" record -d 3 -c "$T/cg" -o "$T/c.stacks" &
	BG=$!
	wait_for grep -qx reset "$FP/control"
	assert_equal "$(cat "$FS/cgroup")" "$T/cg"
	assert_equal "$(cat "$FS/key")" comm
	wait "$BG"
	BG=
	assert_equal "$(cat "$FS/cgroup")" ""
	run -0 grep '^# ' "$T/c.stacks"
	assert_line "# cgroup-filter: module"
	assert_line "# samples: 1000"
}

@test "record -c CGROUP with the module parameter: a missing group is an error, nothing changed" {
	local g m
	m=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	# (Where no hierarchy is visible, as in some containers, the module
	# is left to check the path.)
	[ -n "$m" ] && [ -f "$m/cgroup.procs" ] || skip "no cgroup v2 hierarchy on this host"
	echo "/keep.slice" > "$FS/cgroup"
	for g in no-such-group-here /no/such/group; do
		run --separate-stderr "$OFFS" record -d 0.2 -c "$g" -o "$T/c.stacks"
		assert_failure 1
		assert_regex "$stderr" "^offsample record: no such cgroup: /${g#/} \\("
		assert_equal "$(cat "$FS/cgroup")" "/keep.slice"
		assert_equal "$(params)" "N 9 comm"
		assert_equal "$(stat -c %s "$FP/control")" 0
		[ ! -e "$T/c.stacks" ] || false
	done
}

@test "record -c: paths relative to the cgroup v2 root or under its mount point" {
	local m
	m=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[ -n "$m" ] && [ -f "$m/cgroup.procs" ] || skip "no cgroup v2 hierarchy on this host"
	echo "" > "$FS/cgroup"
	local c
	for c in "$m" "$m/" /; do
		"$OFFS" record -d 3 -c "$c" -o "$T/c.stacks" &
		BG=$!
		wait_for grep -qx reset "$FP/control"
		assert_equal "$(cat "$FS/cgroup")" /
		wait "$BG"
		BG=
		: > "$FP/control"
		assert_equal "$(cat "$FS/cgroup")" ""
		run -0 grep '^# cgroup: ' "$T/c.stacks"
		assert_output "# cgroup: /"
	done
}

@test "record: warns when another reader drained meanwhile" {
	sed -i 's/^generation .*/generation               3/' "$FP/stats"
	run --separate-stderr "$OFFS" record -d 0.1 -o "$T/w.stacks"
	assert_success
	assert_equal "$stderr" "offsample record: warning: another reader drained or reset during the recording (generation 7, expected 4): samples went to another reader"
	run -0 grep -c '^# warning: another reader' "$T/w.stacks"
}

@test "record: SIGTERM ends early, writes a complete file, restores parameters" {
	sed "s/\t100\t/\t$$\t/" "$SMALL" > "$FP/drain"
	SECONDS=0
	"$OFFS" record -d 60 -F 99 -p $$ -o "$T/t.stacks" 2> "$T/err" &
	BG=$!
	wait_for grep -qx reset "$FP/control"
	assert_equal "$(params)" "1 99 comm,pid"
	kill -TERM "$BG"
	local rc=0
	wait "$BG" || rc=$?
	BG=
	assert_equal "$rc" 0
	[ "$SECONDS" -lt 15 ]
	assert_equal "$(params)" "N 9 comm"
	run -0 head -n1 "$T/t.stacks"
	assert_output "# offsample stacks v1"
	run -0 grep -c '^# interrupted: SIGTERM after [0-9.]* s$' "$T/t.stacks"
	# Complete: the process's 4 records, the last one last.
	run -0 grep -vc '^#' "$T/t.stacks"
	assert_output 4
	run -0 tail -n1 "$T/t.stacks"
	assert_output --regexp "^50	sched	R	$$	101	app	app-worker-1	"
	no_temp_files "$T"
	assert_equal "$(cat "$T/err")" ""
}

@test "record: SIGINT (Ctrl-C) ends early the same way" {
	SECONDS=0
	# A background job of a script ignores SIGINT; let it have the default.
	perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$OFFS" record -d 60 -F 50 -o "$T/i.stacks" &
	BG=$!
	wait_for grep -qx 50 "$FS/hz"
	kill -INT "$BG"
	local rc=0
	wait "$BG" || rc=$?
	BG=
	assert_equal "$rc" 0
	[ "$SECONDS" -lt 15 ]
	assert_equal "$(params)" "N 9 comm"
	run -0 grep -c '^# interrupted: SIGINT' "$T/i.stacks"
	run -0 grep -vc '^#' "$T/i.stacks"
	assert_output 8
	no_temp_files "$T"
}

@test "record: an existing output file is replaced by a rename, never written in place" {
	echo old > "$T/o.stacks"
	ln "$T/o.stacks" "$T/o.link"	# a second name of the old file
	run -0 "$OFFS" record -d 0.1 -o "$T/o.stacks"
	# The old inode still holds the old content; the name has the new one.
	assert_equal "$(cat "$T/o.link")" old
	run -0 head -n1 "$T/o.stacks"
	assert_output "# offsample stacks v1"
	[ "$(stat -c %i "$T/o.stacks")" != "$(stat -c %i "$T/o.link")" ]
	# A failed recording leaves the old file alone.
	: > "$FP/drain"
	run -1 "$OFFS" record -d 0.1 -o "$T/o.link"
	assert_equal "$(cat "$T/o.link")" old
	no_temp_files "$T"
}

@test "record: failure after the parameters were set restores them and leaves no file" {
	: > "$FP/drain"		# the "module" gives nothing
	run --separate-stderr "$OFFS" record -d 0.1 -F 77 -o "$T/f.stacks"
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^offsample record: "
	assert_equal "$(params)" "N 9 comm"
	[ ! -e "$T/f.stacks" ]
	no_temp_files "$T"
}

@test "record: usage errors exit 2, other errors exit 1, parameters untouched" {
	local a
	for a in "" "-d" "-d 0" "-d abc" "-d 1 -F 0" "-d 1 -F 1001" "-d 1 -F x" "-d 1 -p 0" \
		"-d 1 -p x" "-d 1 -p 1 -c foo" "-d 1 extra" "-d 1 -o" "--" "-d 1 -- true" \
		"-p 1 -- true" "-c foo -- true"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$OFFS" record $a
		assert_failure 2
		assert_equal "${#stderr_lines[@]}" 1
		assert_regex "$stderr" "^offsample record: "
	done
	run --separate-stderr "$OFFS" record -d 1 -p 999999999
	assert_failure 1
	assert_equal "$stderr" "offsample record: no process 999999999"
	run --separate-stderr "$OFFS" record -d 1 -o "$T/no/dir/x"
	assert_failure 1
	assert_equal "$stderr" "offsample record: cannot write $T/no/dir/x: no directory $T/no/dir"
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" record -d 1
	assert_failure 1
	assert_equal "$stderr" "offsample record: module not loaded ($T/absent not found; load it with modprobe offsample)"
	assert_equal "$(params)" "N 9 comm"
	assert_equal "$(stat -c %s "$FP/control")" 0
	# -- COMMAND: the command must exist; the module needs its cgroup
	# parameter (the fake tree has none: a 0.1 module).
	run --separate-stderr "$OFFS" record -- offsample-no-such-command
	assert_failure 1
	assert_equal "$stderr" "offsample record: offsample-no-such-command: command not found"
	run --separate-stderr "$OFFS" record -o "$T/c.stacks" -- true
	assert_failure 1
	assert_equal "$stderr" "offsample record: record -- COMMAND needs a module with the cgroup parameter (0.2 or later)"
	[ ! -e "$T/c.stacks" ]
	assert_equal "$(params)" "N 9 comm"
}

# ------------------------------------------------------------ snapshot

@test "snapshot: silent, file named after end time and generation, content is the drain" {
	mkdir "$T/s"
	run --separate-stderr "$OFFS" snapshot "$T/s"
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
	run -0 ls -A "$T/s"
	assert_output "offsample-20231114T221330Z-g00000007.stacks"
	cmp "$SMALL" "$T/s/offsample-20231114T221330Z-g00000007.stacks"
	assert_equal "$(stat -c %a "$T/s/offsample-20231114T221330Z-g00000007.stacks")" 600
	# -v says what it did.
	sed 's/^# generation: 7/# generation: 8/' "$SMALL" > "$FP/drain"
	run -0 "$OFFS" snapshot -v "$T/s"
	assert_output "$T/s/offsample-20231114T221330Z-g00000008.stacks: generation 8, 1000 samples, 8 records"
}

@test "snapshot: two overlapping runs produce two complete files" {
	mkdir "$T/s"
	"$OFFS" snapshot "$T/s" & local p1=$!
	"$OFFS" snapshot "$T/s" & local p2=$!
	wait "$p1"
	wait "$p2"
	run -0 ls -A "$T/s"
	assert_equal "${#lines[@]}" 2
	assert_line "offsample-20231114T221330Z-g00000007.stacks"
	assert_line "offsample-20231114T221330Z-g00000007.1.stacks"
	local f
	for f in "$T"/s/*; do cmp "$SMALL" "$f"; done
	# Distinct generations (what the real module gives) never share a name.
	sed 's/^# generation: 7/# generation: 9/' "$SMALL" > "$FP/drain"
	run -0 "$OFFS" snapshot "$T/s"
	[ -e "$T/s/offsample-20231114T221330Z-g00000009.stacks" ]
}

@test "snapshot: --keep N keeps the N newest of our files; others untouched" {
	mkdir "$T/s"
	local i
	for i in 1 2 3 4 5; do
		cp "$SMALL" "$T/s/offsample-2023010${i}T000000Z-g0000000$i.stacks"
	done
	echo notes > "$T/s/notes.txt"
	echo x > "$T/s/offsample-mine.stacks"
	run --separate-stderr "$OFFS" snapshot --keep 3 "$T/s"
	assert_success
	assert_equal "$stderr" ""
	run -0 ls "$T/s"
	assert_output - <<'EOF'
notes.txt
offsample-20230104T000000Z-g00000004.stacks
offsample-20230105T000000Z-g00000005.stacks
offsample-20231114T221330Z-g00000007.stacks
offsample-mine.stacks
EOF
	run -0 "$OFFS" snapshot -v --keep 1 "$T/s"
	assert_line "removed $T/s/offsample-20230104T000000Z-g00000004.stacks"
	assert_line "removed $T/s/offsample-20230105T000000Z-g00000005.stacks"
	assert_line "removed $T/s/offsample-20231114T221330Z-g00000007.stacks"
	run -0 ls "$T/s"
	assert_equal "${#lines[@]}" 3
	assert_line "offsample-20231114T221330Z-g00000007.1.stacks"
}

@test "snapshot: --max-age DAYS removes older files (default 7 days); 0 disables" {
	mkdir "$T/s"
	cp "$SMALL" "$T/s/offsample-20230101T000000Z-g00000001.stacks"
	cp "$SMALL" "$T/s/offsample-20230102T000000Z-g00000002.stacks"
	cp "$SMALL" "$T/s/offsample-20230103T000000Z-g00000003.stacks"
	touch -d '10 days ago' "$T/s/offsample-20230101T000000Z-g00000001.stacks"
	touch -d '5 days ago' "$T/s/offsample-20230102T000000Z-g00000002.stacks"
	touch -d '1 day ago' "$T/s/offsample-20230103T000000Z-g00000003.stacks"
	run -0 "$OFFS" snapshot --max-age 0 "$T/s"
	run -0 ls "$T/s"
	assert_equal "${#lines[@]}" 4
	run -0 "$OFFS" snapshot "$T/s"
	run -0 ls "$T/s"
	refute_line "offsample-20230101T000000Z-g00000001.stacks"
	assert_equal "${#lines[@]}" 4
	run -0 "$OFFS" snapshot --max-age 3 --keep 0 "$T/s"
	run -0 ls "$T/s"
	refute_line "offsample-20230102T000000Z-g00000002.stacks"
	assert_line "offsample-20230103T000000Z-g00000003.stacks"
}

@test "snapshot: errors: no DIR, bad options, missing DIR, module not loaded, bad drain" {
	run --separate-stderr "$OFFS" snapshot
	assert_failure 2
	assert_equal "$stderr" "offsample snapshot: DIR is required (see offsample snapshot --help)"
	run --separate-stderr "$OFFS" snapshot --keep x "$T"
	assert_failure 2
	run --separate-stderr "$OFFS" snapshot --max-age -1 "$T"
	assert_failure 2
	run --separate-stderr "$OFFS" snapshot "$T" "$T"
	assert_failure 2
	run --separate-stderr "$OFFS" snapshot "$T/nonexistent"
	assert_failure 1
	assert_equal "$stderr" "offsample snapshot: $T/nonexistent: no such directory"
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" snapshot "$T"
	assert_failure 1
	assert_regex "$stderr" "^offsample snapshot: module not loaded"
	mkdir "$T/s"
	: > "$FP/drain"
	run --separate-stderr "$OFFS" snapshot "$T/s"
	assert_failure 1
	assert_equal "$stderr" "offsample snapshot: the drain output has no generation header (not the offsample stacks format)"
	run -0 ls -A "$T/s"
	assert_output ""
}

# ------------------------------------------------------------ top

@test "top -n 2 without a terminal: the generation, then what changed (nothing)" {
	run --separate-stderr "$OFFS" top -n 2 -i 0.2
	assert_success
	assert_equal "$stderr" ""
	run -0 grep -c '^offsample top - testhost 6.1.0-56-amd64 - generation 7 - 2023-11-14T22:13:30Z$' <<< "$output"
	assert_output 2
	run -0 "$OFFS" top -n 2 -i 0.2 --include-idle
	assert_line "since generation start (10.0 s): 100.00 thread-s (1000 samples), 100 ticks at 10 Hz"
	assert_line "reasons: [L] lock 50.00%  [I] io 15.00%  [Z] sleep 10.00%  [N] net 10.00%  [D] idle 8.00%  [S] sched 5.00%  [O] other 2.00%"
	assert_line "   30.00%    30.00      300 [L] app[100]/app-worker-1 futex_wait_queue < futex_wait < do_futex < __x64_sys_futex < do_syscall_64 < entry_SYSCALL_64_after_hwframe"
	refute_line --partial "left out"
	# By default idle kernel threads are left out, and counted.
	run -0 "$OFFS" top -n 1
	assert_line "since generation start (10.0 s): 92.00 thread-s (920 samples), 100 ticks at 10 Hz"
	assert_line "reasons: [L] lock 54.35%  [I] io 16.30%  [Z] sleep 10.87%  [N] net 10.87%  [S] sched 5.43%  [O] other 2.17%"
	assert_line "left out: 80 samples of idle kernel threads (8.0% of all); --include-idle shows them"
	refute_line --partial "kworker"
	run -0 "$OFFS" top -n 2 -i 0.2 --include-idle
	assert_line "    2.00%     2.00       20 [O] odd\\x3bname[400]/odd\\x5cthread [unknown] < odd_wait [mymod] < [truncated]"
	# The interval as measured: 0.2 s asked, more on a loaded host (make
	# test's guests beside it made it 1.0 s once, 2026-12-06).
	assert_line --regexp "^last [0-9]+\.[0-9] s: 0\.00 thread-s \(0 samples\), 0 ticks at 10 Hz$"
	assert_line "  (no new samples)"
	run -0 "$OFFS" top -n 1 --top 2
	run -0 grep -c '^ *[0-9.]*% ' <<< "$output"
	assert_output 2
}

@test "top names user frames (offsample-symbolize); --no-symbolize keeps PATH+0xOFFSET" {
	local bin=$T/osw-top off
	printf '__attribute__((noinline)) int wait_here(int x) { volatile int y = x; return y; }\nint main(int c, char **v) { (void)v; return wait_here(c); }\n' > "$T/p.c"
	gcc -O1 -g -o "$bin" "$T/p.c"
	off=$(nm "$bin" | awk '$3 == "wait_here" { print $1 }')
	off=$(printf '0x%x' $((0x$off + 2)))
	export OFFSAMPLE_CACHE_DIR=$T/cache
	mkdir -m 700 "$OFFSAMPLE_CACHE_DIR"
	{
		printf '# offsample stacks v2\n# generation: 7\n# start: 1700000000.000\n# hz: 10\n# ticks: 10\n# samples: 10\n'
		printf '# hostname: testhost\n# kernel: 6.1.0-56-amd64\n'
		printf '# columns: count reason state pid tid comm tname kstack ustack wobj cgroup\n'
		printf '10\tsleep\tS\t-\t-\tosw-top\t-\t__schedule+0x1/0x2;do_nanosleep+0x7b/0x140\t%s+%s\tnanosleep\t/\n' "$bin" "$off"
	} > "$FP/stacks"
	# Its temporary folder goes with it (before 0.6.2 the symbolizer
	# step's trap replaced top's and the folder stayed in TMPDIR).
	export TMPDIR=$T/tmp
	mkdir "$TMPDIR"
	run -0 "$OFFS" top -n 1
	assert_output --regexp '\[Z\] osw-top +do_nanosleep < wait_here \(osw-top\)'
	run -0 "$OFFS" top -n 1 --no-symbolize
	assert_output --partial "do_nanosleep < $bin+$off"
	run -0 "$OFFS" top -n 2 -i 0.1
	run -0 find "$TMPDIR" -mindepth 1
	assert_output ""
}

@test "top: deltas between two reads; a new generation is shown alone with a note" {
	"$OFFS" top -n 2 -i 2 > "$T/top.out" &
	BG=$!
	sleep 1
	# 50 more lock samples of worker 2 and a new stack, 5 more ticks.
	awk -F'\t' -v OFS='\t' '/^# ticks:/ { print "# ticks: 105"; next }
		!/^#/ && $7 == "app-worker-2" { $1 += 50 } { print }
		END { print "30", "io", "D", "100", "104", "app", "app-new", "io_schedule+0x1/0x2" }' "$SMALL" > "$T/next"
	mv "$T/next" "$FP/stacks"
	wait "$BG"
	BG=
	run -0 sed -n '/^last /,$p' "$T/top.out"
	assert_line --regexp "^last [0-9.]+ s: 8\.00 thread-s \(80 samples\), 5 ticks at 10 Hz$"
	assert_line "reasons: [L] lock 62.50%  [I] io 37.50%"
	assert_line "   62.50%     5.00       50 [L] app[100]/app-worker-2 futex_wait_queue < futex_wait < do_futex < __x64_sys_futex < do_syscall_64 < entry_SYSCALL_64_after_hwframe"
	assert_line "   37.50%     3.00       30 [I] app[100]/app-new io_schedule"
	# Unchanged records are not listed.
	assert_equal "$(grep -c '^ *[0-9.]*% ' <<< "$output")" 2

	cp "$SMALL" "$FP/stacks"
	"$OFFS" top -n 2 -i 2 --include-idle > "$T/top2.out" &
	BG=$!
	sleep 1
	sed 's/^# generation: 7/# generation: 8/' "$SMALL" > "$T/next"
	mv "$T/next" "$FP/stacks"
	wait "$BG"
	BG=
	run -0 cat "$T/top2.out"
	assert_line "generation changed (7 -> 8): samples before the drain or reset went to another reader"
	run -0 grep -c '^since generation start (10.0 s): 100.00 thread-s (1000 samples)' "$T/top2.out"
	assert_output 2
}

@test "top: usage errors exit 2; module not loaded exits 1" {
	local a
	for a in "-i 0" "-i abc" "-i 0.05" "-n 0" "-n x" "--top 0" "extra"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$OFFS" top $a
		assert_failure 2
		assert_equal "${#stderr_lines[@]}" 1
	done
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" top -n 1
	assert_failure 1
	assert_regex "$stderr" "^offsample top: module not loaded"
}
