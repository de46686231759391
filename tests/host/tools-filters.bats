#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# tools/offsample reading commands: piped standard input as the default
# input, the shared filters (--reason ... --kernel-only), --seconds and
# the mixed-rate warning, offsample diff, the refusal to write an SVG to
# a terminal.

load tools-common

setup() {
	T=$BATS_TEST_TMPDIR
	# No module unless a test builds the fake tree.
	export OFFSAMPLE_PROC=$T/no-module OFFSAMPLE_SYS=$T/no-sys
}

# folded_of FILE...: stackcollapse-offsample's output, the reference.
folded_of() {
	"$SCO" "$@"
}

# ------------------------------------------------------------ input

@test "piped standard input is read without '-' (report, collapse, flamegraph, pprof)" {
	run --separate-stderr bash -c 'cat "$1" | "$2" collapse' _ "$SMALL" "$OFFS"
	assert_success
	assert_equal "$output" "$(folded_of "$SMALL")"
	assert_equal "$stderr" ""
	# A redirected file is standard input too.
	run -0 bash -c '"$2" collapse < "$1"' _ "$SMALL" "$OFFS"
	assert_equal "$output" "$(folded_of "$SMALL")"
	run -0 bash -c 'cat "$1" | "$2" report' _ "$SMALL" "$OFFS"
	assert_line "# input: stdin"
	# Idle kernel threads left out by default, and said so.
	assert_line "# samples: 920"
	assert_line "# left out: 80 samples of idle kernel threads (reason idle, 8.0% of all); --include-idle shows them"
	run -0 bash -c 'cat "$1" | "$2" flamegraph | head -c 200' _ "$SMALL" "$OFFS"
	assert_output --partial "<svg"
	run -0 bash -c 'cat "$1" | "$2" pprof | gzip -dc | wc -c' _ "$SMALL" "$OFFS"
	[ "$output" -gt 100 ]
}

@test "no FILE: a terminal or /dev/null means the live file; an empty pipe too (cron)" {
	# Without the module, /dev/null: the module error, not a stdin error.
	run --separate-stderr "$OFFS" report < /dev/null
	assert_failure 1
	assert_equal "$stderr" "offsample report: module not loaded ($OFFSAMPLE_PROC not found; load it with modprobe offsample)"
	fake_tree "$V2S"
	run -0 "$OFFS" collapse --no-symbolize < /dev/null
	assert_equal "$output" "$(folded_of "$V2S")"
	# cron gives a job an empty pipe: the live file, silently.
	run --separate-stderr bash -c ': | "$1" collapse --no-symbolize' _ "$OFFS"
	assert_success
	assert_equal "$output" "$(folded_of "$V2S")"
	assert_equal "$stderr" ""
	# "-" insists on standard input: empty is an error.
	run --separate-stderr bash -c ': | "$1" report -' _ "$OFFS"
	assert_failure 1
	assert_equal "$stderr" "offsample report: no offsample stacks in input (empty)"
	# A pipe with data wins over the live file.
	run -0 bash -c 'cat "$1" | "$2" collapse' _ "$SMALL" "$OFFS"
	assert_equal "$output" "$(folded_of "$SMALL")"
}

@test "process substitution and named pipes are read once (diff <(...) <(...))" {
	run -0 bash -c '"$2" collapse <(cat "$1")' _ "$SMALL" "$OFFS"
	assert_equal "$output" "$(folded_of "$SMALL")"
	run -0 bash -c '"$2" diff --folded <(cat "$1") <(cat "$1")' _ "$SMALL" "$OFFS"
	assert_equal "${#lines[@]}" 7
	assert_line "sleep;cron;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 100 100"
}

# ------------------------------------------------------------ filters

@test "--reason and --exclude-reason keep exactly the records of those reasons" {
	run -0 "$OFFS" collapse --reason lock,io "$SMALL"
	assert_equal "$output" "$(folded_of "$SMALL" | grep -E '^(lock|io);')"
	run -0 "$OFFS" collapse --reason lock --reason io "$SMALL"
	assert_equal "$output" "$(folded_of "$SMALL" | grep -E '^(lock|io);')"
	run -0 "$OFFS" collapse --exclude-reason idle "$SMALL"
	assert_equal "$output" "$(folded_of "$SMALL" | grep -v '^idle;')"
	# The report's totals and header follow the filter.
	run -0 "$OFFS" report --exclude-reason=idle,other "$SMALL"
	assert_line "# samples: 900"
	assert_line "# filter: exclude-reason=idle,other"
	assert_line "# unfiltered-samples: 1000"
	assert_line --regexp '^  total +900 +100\.00% +90\.00$'
	refute_line --regexp "^  \\[D\\] idle"
	# Unknown reasons are usage errors, before the input is looked at.
	run --separate-stderr "$OFFS" report --reason lokc "$T/missing"
	assert_failure 2
	assert_equal "$stderr" "offsample report: --reason: unknown reason \"lokc\" (reasons: io lock sched sleep net ipc fault stopped idle other cpu) (see offsample report --help)"
	run --separate-stderr "$OFFS" collapse --reason "$SMALL"
	assert_failure 2
	assert_equal "$stderr" "offsample collapse: --reason: unknown reason \"$SMALL\" (reasons: io lock sched sleep net ipc fault stopped idle other cpu) (see offsample collapse --help)"
	run --separate-stderr "$OFFS" collapse "$SMALL" --reason
	assert_failure 2
	assert_equal "$stderr" "offsample collapse: --reason needs a value (see offsample collapse --help)"
}

@test "--comm, --pid, --tid, --state, --cgroup select records; ids need a key that has them" {
	run -0 "$OFFS" collapse --show pid,tid --comm app "$SMALL"
	assert_equal "${#lines[@]}" 4
	run -0 "$OFFS" report --by thread --comm 'Web Content' "$SMALL"
	assert_line "# samples: 100"
	# A name with an escaped byte matches as the user types it.
	run -0 "$OFFS" collapse --comm 'odd;name' "$SMALL"
	assert_output "other;odd\\x3bname;[truncated];odd_wait [mymod];[unknown];schedule;__schedule 20"
	run -0 "$OFFS" collapse --show tid --pid 100 --tid 101,103 "$SMALL"
	assert_equal "${#lines[@]}" 3
	assert_line --regexp '^lock;app;101;.* 300$'
	assert_line --regexp '^io;app;103;.* 150$'
	assert_line --regexp '^sched;app;101;.* 50$'
	run -0 "$OFFS" collapse --state D "$SMALL"
	assert_equal "$(reason_totals_folded <<< "$output")" "$(printf 'io 150\nother 20')"
	run -0 "$OFFS" collapse --no-symbolize --cgroup system.slice "$V2S"
	assert_equal "$(reason_totals_folded <<< "$output")" "$(printf 'io 25\nlock 60\nsleep 13')"
	run -0 "$OFFS" collapse --no-symbolize --cgroup /sys/fs/cgroup/system.slice/cron.service/ "$V2S"
	assert_equal "$(reason_totals_folded <<< "$output")" "sleep 13"
	# A prefix that is not a whole path component does not match.
	run --separate-stderr "$OFFS" collapse --no-symbolize --cgroup /system.slice/app "$V2S"
	assert_failure 1
	assert_equal "$stderr" "offsample collapse: no stack matches the filters (cgroup=/system.slice/app)"
	# Data recorded without pids: a clear error, not an empty result.
	run --separate-stderr "$OFFS" report --pid 1 "$D61"
	assert_failure 1
	assert_equal "$stderr" "offsample report: --pid needs pids in the data, but $D61 was recorded with key=comm (record with key=pid)"
	run --separate-stderr "$OFFS" report --cgroup / "$SMALL"
	assert_failure 1
	assert_equal "$stderr" "offsample report: --cgroup needs a cgroup column, but $SMALL has none (stacks format v1)"
	run --separate-stderr "$OFFS" report --pid 12a "$SMALL"
	assert_failure 2
	assert_equal "$stderr" "offsample report: --pid needs ids (812 or 812,813), not \"12a\" (see offsample report --help)"
	run --separate-stderr "$OFFS" report --state X "$SMALL"
	assert_failure 2
	[[ $stderr == *'unknown state "X"'* ]]
	# The old bare frame option is now a filter: the error points the way.
	run --separate-stderr "$OFFS" collapse --pid "$SMALL"
	assert_failure 2
	run -0 "$OFFS" collapse --help
	assert_output --partial "--show LIST"
}

@test "--user-only and --kernel-only drop frames for every reading command" {
	run -0 "$OFFS" collapse --user-only --no-symbolize "$V2S"
	assert_equal "$output" "$("$SCO" --user-only "$V2S")"
	run -0 "$OFFS" collapse --kernel-only --no-symbolize "$V2S"
	assert_equal "$output" "$("$SCO" --kernel-only "$V2S")"
	run -0 "$OFFS" report --kernel-only --no-symbolize "$V2S"
	refute_output --partial "      --"
	assert_line "      __schedule"
	run -0 "$OFFS" report --user-only --no-symbolize "$V2S"
	refute_output --partial "__schedule"
	assert_line "      /opt/offsample-fixture/bin/app+0x2a05"
	run --separate-stderr "$OFFS" report --user-only --kernel-only "$V2S"
	assert_failure 2
	assert_equal "$stderr" "offsample report: --user-only and --kernel-only exclude each other (see offsample report --help)"
}

@test "filters keep the file records of every generation and its header order" {
	cat "$V2S" "$SMALL" > "$T/two"
	run -0 "$OFFS" collapse --no-symbolize --reason sleep --show pid "$T/two"
	assert_line --regexp '^sleep;env;200;\[anon\];.* 13$'
	assert_line --regexp '^sleep;cron;200;.* 100$'
	# The selection itself: a valid stacks file, "# file:" lines kept in
	# place, counts recomputed per generation.
	run -0 perl "$ROOT/tools/lib/offsample-select.pl" --reason io -o - -- "$T/two"
	assert_equal "$(grep -c '^# offsample stacks' <<< "$output")" 2
	assert_equal "$(grep -c '^# file:' <<< "$output")" "$(grep -c '^# file:' "$V2S")"
	assert_equal "$(grep '^# samples:' <<< "$output" | tr '\n' ' ')" "# samples: 25 # samples: 150 "
	assert_equal "$(grep '^# records:' <<< "$output" | tr '\n' ' ')" "# records: 1 # records: 1 "
	assert_equal "$(grep '^# unfiltered-samples:' <<< "$output" | tr '\n' ' ')" "# unfiltered-samples: 100 # unfiltered-samples: 1000 "
	# "# filter:" and "# unfiltered-samples:" go right before "# columns:".
	assert_equal "$(grep -A2 '^# filter:' <<< "$output" | grep -c '^# columns:')" 2
}

# ------------------------------------------------------------ --seconds

@test "--seconds weighs by 1/hz; inputs of different rates warn without it" {
	# SMALL is 10 Hz, V2 5 Hz.
	run -0 "$OFFS" collapse --seconds "$SMALL"
	assert_line --regexp '^lock;app;.*;__schedule 50$'
	assert_line --regexp '^other;odd.* 2$'
	run -0 "$SCO" --seconds "$SMALL"
	assert_line --regexp '^lock;app;.*;__schedule 50$'
	run --separate-stderr "$OFFS" collapse --no-symbolize "$SMALL" "$V2"
	assert_success
	assert_equal "$stderr" "stackcollapse-offsample: warning: the inputs were sampled at different rates (5, 10 Hz): their sample counts do not add up; --seconds weighs each by 1/hz"
	run --separate-stderr "$OFFS" collapse --no-symbolize --seconds "$SMALL" "$V2"
	assert_success
	assert_equal "$stderr" ""
	# Totals: thread-seconds of both files, summed per reason.
	local want got
	want=$(awk -F'\t' '/^# offsample stacks/ { hz = 0 } /^# hz:/ { hz = $0; sub(/.*: /, "", hz) }
		!/^#/ && NF >= 8 { s[$2] += $1 / hz } END { for (r in s) printf "%s %.3f\n", r, s[r] }' "$SMALL" "$V2" | sort)
	got=$(awk '{ n = $NF; split($0, f, ";"); s[f[1]] += n } END { for (r in s) printf "%s %.3f\n", r, s[r] }' <<< "$output" | sort)
	assert_equal "$got" "$want"
	# Every line still parses as flamegraph.pl input.
	run -0 grep -cvP "$FOLDED_RE" <<< "$output" || true
	assert_output 0
	# The report orders by thread-seconds with --seconds.
	run --separate-stderr "$OFFS" report --no-symbolize "$SMALL" "$V2"
	assert_equal "$stderr" "offsample report: warning: the inputs were sampled at different rates (5, 10 Hz): their sample counts do not compare; --seconds weighs each by 1/hz"
	run -0 "$OFFS" report --seconds --no-symbolize "$SMALL" "$V2"
	assert_line "# order and percent: by thread-seconds (--seconds)"
}

# ------------------------------------------------------------ diff

@test "offsample diff: folded BEFORE AFTER counts, red grew and blue shrank in the SVG" {
	sed 's/^300\tlock/100\tlock/; s/^150\tio/400\tio/; /\tcron\t/d' "$SMALL" > "$T/after"
	"$ROOT/tests/lib/restamp-stacks" "$T/after"
	run -0 "$OFFS" diff --folded "$SMALL" "$T/after"
	assert_equal "${#lines[@]}" 7
	assert_line "lock;app;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 500 300"
	assert_line "io;app;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule 150 400"
	assert_line "sleep;cron;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 100 0"
	assert_line "idle;kworker/0:1;ret_from_fork;kthread;worker_thread;schedule;__schedule 80 80"
	# The same with filters applied to both.
	run -0 "$OFFS" diff --folded --reason io "$SMALL" "$T/after"
	assert_output "io;app;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule 150 400"
	# The SVG: the leaf of the io stack grew (red), the lock one shrank
	# (blue): fill colours of the two __schedule_[k] frames.
	run -0 "$OFFS" diff -o "$T/d.svg" "$SMALL" "$T/after"
	run -0 grep -c '<svg' "$T/d.svg"
	grep -q 'Off-CPU time: .*small-v1.stacks -&gt; .*after' "$T/d.svg"
	# No reason legend: the colours say grew or shrank, not why.
	run -1 grep -c 'id="legend"' "$T/d.svg"
	run -0 "$OFFS" flamegraph -o "$T/plain.svg" "$T/after"
	run -0 grep -c 'id="legend"' "$T/plain.svg"
	local io lock
	# Widths in thread-seconds (10 Hz: 400 samples are 40 s).
	grep -q 'width: .*after in thread-seconds; red grew, blue shrank since .*small-v1.stacks' "$T/d.svg"
	# (The tooltips show frames without _[k]; the colour is on the line.)
	io=$(grep '<title>__schedule (40 s, ' "$T/d.svg" | grep -o 'fill="rgb([0-9,]*)"' | head -n1)
	lock=$(grep '<title>__schedule (30 s, ' "$T/d.svg" | grep -o 'fill="rgb([0-9,]*)"' | head -n1)
	[[ $io =~ rgb\(255,([0-9]+),([0-9]+)\) ]] || false
	[ "${BASH_REMATCH[1]}" -lt 255 ]
	[[ $lock =~ rgb\(([0-9]+),([0-9]+),255\) ]] || false
	[ "${BASH_REMATCH[1]}" -lt 255 ]
	# --samples: sample counts.
	run -0 "$OFFS" diff --samples -o "$T/s.svg" "$SMALL" "$T/after"
	grep -q '<title>__schedule (400 samples, 42.11%; +26.32%)' "$T/s.svg"
	grep -q 'width: .*after in samples; red grew' "$T/s.svg"
	# Usage errors.
	run --separate-stderr "$OFFS" diff "$SMALL"
	assert_failure 2
	assert_equal "$stderr" "offsample diff: diff needs two files, BEFORE and AFTER (1 given) (see offsample diff --help)"
	run --separate-stderr "$OFFS" diff - -
	assert_failure 2
	# Different rates: a warning; --seconds compares seconds.
	run --separate-stderr "$OFFS" diff --folded --no-symbolize "$SMALL" "$V2"
	assert_success
	assert_equal "$stderr" "offsample diff: warning: $SMALL was sampled at 10 Hz, $V2 at 5 Hz: their sample counts do not compare; --seconds weighs each by 1/hz"
	run --separate-stderr "$OFFS" diff --folded --seconds "$SMALL" "$T/after"
	assert_equal "$stderr" ""
	assert_line --regexp '^io;app;.*;__schedule 15 40$'
}

@test "an SVG is not written to a terminal without -o" {
	run -0 script -qec "$OFFS flamegraph $SMALL; echo rc=\$?" /dev/null
	assert_output --partial "offsample flamegraph: will not write an SVG to a terminal; use -o FILE or a redirection"
	assert_output --partial "rc=2"
	refute_output --partial "<svg"
	run -0 script -qec "$OFFS diff $SMALL $SMALL; echo rc=\$?" /dev/null
	assert_output --partial "rc=2"
	# --folded is text: allowed.
	run -0 script -qec "$OFFS diff --folded $SMALL $SMALL; echo rc=\$?" /dev/null
	assert_output --partial "rc=0"
	assert_output --partial "__schedule 80 80"
}

@test "idle kernel threads: left out of report and flamegraph by default, counted; --include-idle, a filter that chooses, or nothing else to show brings them back" {
	run -0 "$OFFS" report "$SMALL"
	assert_line "# samples: 920"
	assert_line "# left out: 80 samples of idle kernel threads (reason idle, 8.0% of all); --include-idle shows them"
	refute_line --regexp '^  \[D\] idle '
	refute_output --partial "kworker"
	run -0 "$OFFS" report --include-idle "$SMALL"
	assert_line "# samples: 1000"
	assert_line --regexp '^  \[D\] idle +80 +8\.00% '
	refute_output --partial "left out"
	# A filter that chooses reasons, processes, threads or states: what
	# it chooses, idle or not.
	run -0 "$OFFS" report --comm kworker/0:1 "$SMALL"
	assert_line "# samples: 80"
	refute_output --partial "left out"
	run -0 "$OFFS" report --reason idle,lock "$SMALL"
	assert_line "# samples: 580"
	run -0 "$OFFS" report --tid 20 "$SMALL"
	assert_line "# samples: 80"
	# A cgroup or frame filter does not choose: still left out.
	run -0 "$OFFS" report --cgroup / --no-symbolize "$V2S"
	assert_line "# left out: 2 samples of idle kernel threads (reason idle, 2.0% of all); --include-idle shows them"
	# Nothing but idle threads: shown, no note.
	perl "$ROOT/tools/lib/offsample-select.pl" --reason idle -o "$T/idle.stacks" -- "$SMALL"
	run --separate-stderr "$OFFS" report "$T/idle.stacks"
	assert_success
	assert_equal "$stderr" ""
	assert_line --regexp '^  \[D\] idle +80 +100\.00% '
	# The graph: no idle frame, the subtitle says what was left out.
	run -0 "$OFFS" flamegraph -o "$T/d.svg" "$SMALL"
	run -1 grep -c 'data-n="idle"' "$T/d.svg"
	run -0 grep -c 'idle kernel threads left out (8.0% of all samples): --include-idle shows them' "$T/d.svg"
	run -0 "$OFFS" flamegraph --include-idle -o "$T/i.svg" "$SMALL"
	run -0 grep -c 'data-n="idle"' "$T/i.svg"
	run -1 grep -c 'left out' "$T/i.svg"
	# Pipelines get everything: collapse and pprof keep them.
	run -0 "$OFFS" collapse "$SMALL"
	assert_line --partial "idle;kworker/0:1;"
}
