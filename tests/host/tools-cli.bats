#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tools/offsample: help, status, report, collapse, flamegraph, error
# paths, cron environment and installed layout, against fixture files and a
# fake /proc + /sys tree (tools-common.bash).
#
#   bats tests/host/tools-cli.bats

load tools-common

setup() {
	T=$BATS_TEST_TMPDIR
	fake_tree
}

teardown() {
	if [ -n "${NP:-}" ]; then rm -rf "$NP"; fi
}

# A fake tree readable only by root, like the real one, in a directory
# others can enter (BATS_TEST_TMPDIR is not), for the "not root" tests.
root_only_tree() {
	NP=$(mktemp -d /tmp/offs-np.XXXXXX)
	chmod 755 "$NP"
	fake_tree "$SMALL" "$NP"
	chmod 0755 "$NP/proc" "$FP" "$NP/sys"
	chmod 0400 "$FP"/stacks "$FP"/drain "$FP"/stats "$FP"/threads
	chmod 0200 "$FP"/control
	chmod 0644 "$FS"/*
	# A copy of the tools nobody can run wherever the checkout is (a
	# private mktemp directory, /root ...).
	cp -r "$ROOT/tools" "$ROOT/flamegraph" "$NP/"
	chmod -R a+rX "$NP/tools" "$NP/flamegraph"
}
as_nobody() {
	local cmd=$1
	shift
	[ "$cmd" = "$OFFS" ] && cmd=$NP/tools/offsample
	setpriv --reuid=65534 --regid=65534 --clear-groups env -u HOME \
		OFFSAMPLE_PROC="$OFFSAMPLE_PROC" OFFSAMPLE_SYS="$OFFSAMPLE_SYS" "$cmd" "$@"
}

# ------------------------------------------------------------ help

@test "offsample --help, help, and --help of every subcommand: stdout, exit 0" {
	run --separate-stderr "$OFFS" --help
	assert_success
	assert_output --partial "Usage: offsample COMMAND"
	assert_equal "$stderr" ""
	run -0 "$OFFS" help
	assert_output --partial "Usage: offsample COMMAND"
	local c
	for c in status record snapshot report collapse flamegraph top; do
		run --separate-stderr "$OFFS" "$c" --help
		assert_success
		assert_output --partial "Usage: offsample $c"
		assert_equal "$stderr" ""
		run -0 "$OFFS" "$c" -h
		assert_output --partial "Usage: offsample $c"
		run -0 "$OFFS" help "$c"
		assert_output --partial "Usage: offsample $c"
	done
	# --help wins over missing module and bad arguments.
	OFFSAMPLE_PROC=$T/nothing run -0 "$OFFS" record --help
	run -0 "$OFFS" snapshot --keep x --help
}

@test "offsample: no command, unknown command, unknown options: exit 2, one line on stderr" {
	run --separate-stderr "$OFFS"
	assert_failure 2
	assert_output ""
	run --separate-stderr "$OFFS" frobnicate
	assert_failure 2
	assert_equal "$stderr" 'offsample: no such command "frobnicate" (see offsample --help)'
	run --separate-stderr "$OFFS" --frobnicate
	assert_failure 2
	assert_equal "${#stderr_lines[@]}" 1
	local c
	for c in status record snapshot report collapse flamegraph top; do
		run --separate-stderr "$OFFS" "$c" --frobnicate
		assert_failure 2
		assert_output ""
		assert_equal "$stderr" "offsample $c: unknown option --frobnicate (see offsample $c --help)"
	done
	run --separate-stderr "$OFFS" help nosuch
	assert_failure 2
	assert_equal "${#stderr_lines[@]}" 1
}

# ------------------------------------------------------------ status

@test "status: parameters, samples by reason, dropped, cpu share, memory" {
	echo Y > "$FS/enabled"; echo 19 > "$FS/hz"; echo comm,tid > "$FS/key"
	run --separate-stderr "$OFFS" status
	assert_success
	assert_equal "$stderr" ""
	assert_line "module:      loaded, version 0.1.0, stacks format v1"
	assert_line "parameters:  enabled=Y hz=19 key=comm,tid max_stacks=8192 max_depth=48 kthreads=Y"
	assert_line "sampling:    on, 19 Hz"
	assert_line "ticks:       1234 (overrun 2), tick time avg 0.065 ms, max 0.480 ms"
	assert_line "samples:     20698 since load"
	assert_line "  [D] idle              12401   59.91%"
	assert_line "  [L] lock                477    2.30%"
	assert_line "dropped:     2 (table full 2, out of memory 0)"
	assert_line "generation:  6: 110 ticks, 10374 samples, 95 records; drains 3, resets 1"
	assert_line "cpu share:   0.124% of one CPU (sampler CPU time 0.080 s)"
	assert_line "memory:      1.5 MiB (1572864 bytes)"
	# Reasons without samples are not listed.
	refute_line --partial "[F] fault"
	echo N > "$FS/enabled"
	run -0 "$OFFS" status
	assert_line "sampling:    off (enabled=N)"
}

@test "status: v2 parameters: user stacks, max_user_depth, key with wobj, cgroup filter" {
	echo Y > "$FS/enabled"; echo comm,wobj > "$FS/key"
	echo Y > "$FS/user_stacks"; echo 32 > "$FS/max_user_depth"; echo > "$FS/cgroup"
	printf '%-24s %s\n' user_walks 5000 user_raced 12 user_trylock_failed 3 cgroup_skipped 0 >> "$FP/stats"
	run --separate-stderr "$OFFS" status
	assert_success
	assert_equal "$stderr" ""
	assert_line 'parameters:  enabled=Y hz=9 key=comm,wobj max_stacks=8192 max_depth=48 kthreads=Y user_stacks=Y max_user_depth=32 cgroup=""'
	assert_line "user stacks: on, up to 32 frames; 5000 walks, 12 raced, 3 busy (mmap lock held)"
	assert_line "cgroup:      all (no cgroup filter)"
	echo N > "$FS/user_stacks"; echo /system.slice/db.service > "$FS/cgroup"
	sed -i 's/^cgroup_skipped .*/cgroup_skipped           777/' "$FP/stats"
	run -0 "$OFFS" status
	assert_line "user stacks: off (user_stacks=N); 5000 walks, 12 raced, 3 busy (mmap lock held)"
	assert_line "cgroup:      only /system.slice/db.service (777 visits of other threads skipped)"
	# 0.2: no raced walks (the stack is walked while the thread is
	# pinned), walks cut at a page not in memory; bounds and access.
	sed -i '/^user_raced /d' "$FP/stats"
	printf '%-24s %s\n' user_faulted 4 max_stacks_limit 23312 thread_cache 65536 \
		thread_cache_limit 1006064 generations_retired 1 max_retired 4 swaps_refused 2 \
		open_denied 7 >> "$FP/stats"
	run -0 "$OFFS" status
	assert_line "user stacks: off (user_stacks=N); 5000 walks, 4 cut short (page not in memory), 3 busy (mmap lock held)"
	assert_line "bounds:      max_stacks 8192 of 23312 allowed here, thread_cache 65536 of 1006064; 1 of 4 old generations held open (2 drains/resets refused)"
	assert_line "access:      7 opens refused (no CAP_SYS_ADMIN, not in group=)"
	refute_line --partial "cfi tables:"
	# 0.2: compiled .eh_frame tables.
	printf '%-24s %s\n' cfi_cache_mb 64 cfi_tables 12 cfi_bytes 3145728 cfi_builds_pending 1 \
		cfi_built 10 cfi_failed 1 cfi_too_big 0 cfi_evicted 2 cfi_build_ns 250000000 \
		user_cfi_frames 4321 >> "$FP/stats"
	run -0 "$OFFS" status
	assert_line "cfi tables:  12 files, 3.0 of 64 MiB; 10 built (250.0 ms), 1 failed, 0 too big, 2 evicted, 1 pending; 4321 frames found with them"
	refute_line --partial "cannot be followed"
	# 0.5.2: stacks ended at call-frame information that cannot be followed.
	printf '%-24s %s\n' unwind_errors 17 >> "$FP/stats"
	run -0 "$OFFS" status
	assert_line "             17 stacks ended at call-frame information that cannot be followed"
	sed -i 's/^cfi_cache_mb .*/cfi_cache_mb             0/' "$FP/stats"
	run -0 "$OFFS" status
	assert_line "cfi tables:  off (cfi_cache_mb=0: frame pointers only)"
	# An older module without them: no such lines.
	rm "$FS/user_stacks" "$FS/max_user_depth" "$FS/cgroup"
	run -0 "$OFFS" status
	refute_line --partial "user stacks:"
	refute_line --partial "cgroup:"
}

@test "status: module not loaded: exit 1, says so in one line" {
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" status
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample status: module not loaded ($T/absent not found; load it with modprobe offsample)"
}

@test "status: empty or garbage stats file: exit 1, one line" {
	: > "$FP/stats"
	run --separate-stderr "$OFFS" status
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^offsample status: .*not offsample statistics"
}

@test "not root: status, report, snapshot, record, top fail with one line and exit 1" {
	root_only_tree
	run --separate-stderr as_nobody "$OFFS" status
	assert_failure 1
	assert_equal "$stderr" "offsample status: cannot read $FP/stats: permission denied (must be root)"
	run --separate-stderr as_nobody "$OFFS" report
	assert_failure 1
	assert_equal "$stderr" "offsample report: cannot read $FP/stacks: permission denied (must be root)"
	run --separate-stderr as_nobody "$OFFS" snapshot /tmp
	assert_failure 1
	assert_equal "$stderr" "offsample snapshot: cannot read $FP/drain: permission denied (must be root)"
	run --separate-stderr as_nobody "$OFFS" record -d 1 -o /tmp/never.stacks
	assert_failure 1
	assert_equal "$stderr" "offsample record: cannot read $FP/drain: permission denied (must be root)"
	run --separate-stderr as_nobody "$OFFS" top -n 1
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	run --separate-stderr as_nobody "$OFFS" collapse
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	run --separate-stderr as_nobody "$OFFS" flamegraph
	assert_failure 1
	assert_output ""
	assert_equal "${#stderr_lines[@]}" 1
	# Nothing changed, nothing written.
	assert_equal "$(cat "$FS/enabled")" N
	assert_equal "$(stat -c %s "$FP/control")" 0
	[ ! -e /tmp/never.stacks ]
}

# ------------------------------------------------------------ report

@test "report: header, reason shares and annotated top stacks (exact numbers)" {
	run --separate-stderr "$OFFS" report --include-idle "$SMALL"
	assert_success
	assert_equal "$stderr" ""
	assert_line "# host: testhost"
	assert_line "# kernel: 6.1.0-56-amd64"
	assert_line "# duration: 10.000 s"
	assert_line "# hz: 10"
	assert_line "# samples: 1000"
	assert_line "# dropped: 0"
	assert_line "# source: drain, generation 7"
	assert_line "# start: 2023-11-14T22:13:20Z"
	assert_line --partial "# legend: [I] io  [L] lock  [S] sched (run queue)  [Z] sleep  [N] net  [P] ipc"
	# Reasons, by samples, ties in the canonical order (sleep before net).
	assert_output --partial "$(cat <<'EOF'
  reason              samples  percent   thread-s
  [L] lock                500   50.00%      50.00
  [I] io                  150   15.00%      15.00
  [Z] sleep               100   10.00%      10.00
  [N] net                 100   10.00%      10.00
  [D] idle                 80    8.00%       8.00
  [S] sched                50    5.00%       5.00
  [O] other                20    2.00%       2.00
  total                  1000  100.00%     100.00
EOF
)"
	# The two lock records (two threads, same stack) are one stack.
	assert_line "[L] lock: 500 samples, 50.00% of all; top 1 of 1 stack"
	assert_line "  [L]  50.00%  500 samples  (100.00% of lock)  state S"
	assert_line "  [O]   2.00%  20 samples  (100.00% of other)  state D"
	assert_line "  [S]   5.00%  50 samples  (100.00% of sched)  state R"
	assert_line "      odd_wait [mymod]"
	# Frames as function names, leaf first.
	run -0 grep -A3 '^  \[Z\]  ' <<< "$output"
	assert_line --index 1 "      processes: cron[200] 100"
	assert_line --index 2 "      __schedule"
	assert_line --index 3 "      schedule"
}

@test "report: real captures, numbers computed independently from the file; --top; --offsets" {
	local f r l n tot hz want stacks shown
	for f in "$D61" "$D612" "$D61V2" "$D612V2"; do
		run -0 "$OFFS" report --include-idle --top 2 "$f"
		local out=$output
		tot=$(awk -F'\t' '!/^#/ { t += $1 } END { print t }' "$f")
		hz=$(sed -n 's/^# hz: //p' "$f")
		assert_line "# samples: $tot"
		assert_line "$(awk -v t="$tot" -v h="$hz" 'BEGIN { printf "  %-16s %10d %8s %10.2f", "total", t, "100.00%", t / h }')"
		shown=0
		for r in idle ipc sleep net io lock sched fault stopped other; do
			case $r in idle) l=D ;; ipc) l=P ;; sleep) l=Z ;; net) l=N ;; io) l=I ;; lock) l=L ;; sched) l=S ;;
			fault) l=F ;; stopped) l=T ;; other) l=O ;; esac
			n=$(awk -F'\t' -v r="$r" '!/^#/ && $2 == r { s += $1 } END { print s + 0 }' "$f")
			[ "$n" -gt 0 ] || continue
			want=$(awk -v n="$n" -v t="$tot" -v h="$hz" -v x="[$l] $r" 'BEGIN { printf "  %-16s %10d %7.2f%% %10.2f", x, n, 100 * n / t, n / h }')
			grep -qxF -- "$want" <<< "$out" || { echo "missing: $want"; return 1; }
			# Distinct stacks of the reason: the folded lines without comm.
			stacks=$("$SCO" --no-comm "$f" | grep -c "^$r;")
			want=$(awk -v n="$n" -v t="$tot" -v x="[$l] $r" -v k="$stacks" 'BEGIN { printf "%s: %d samples, %.2f%% of all; top %d of %d stack%s", x, n, 100 * n / t, (k < 2 ? k : 2), k, (k == 1 ? "" : "s") }')
			grep -qxF -- "$want" <<< "$out" || { echo "missing: $want"; return 1; }
			shown=$((shown + (stacks < 2 ? stacks : 2)))
		done
		assert_equal "$(grep -cE '^  \[.\] +[0-9.]+%  [0-9]+ samples' <<< "$out")" "$shown"
	done
	run -0 "$OFFS" report --include-idle --offsets "$D61"
	assert_line "      scsi_error_handler+0x1c7/0x4e0 [scsi_mod]"
	run -0 "$OFFS" report --include-idle "$D61"
	assert_line "      scsi_error_handler [scsi_mod]"
}

@test "report --by process and --by thread" {
	run -0 "$OFFS" report --include-idle --by process --top 1 "$SMALL"
	assert_line "  app[100]                700   70.00%      70.00  [L] 71.43% [I] 21.43% [S] 7.14%"
	assert_line "app[100]: 700 samples, 70.00% of all; top 1 of 3 stacks"
	assert_line "  [L]  50.00%  500 samples  (71.43% of process)  state S"
	assert_line "      threads: app-worker-1 300, app-worker-2 200"
	run -0 "$OFFS" report --include-idle --by thread --top 2 "$SMALL"
	assert_line "  app[100] / app-worker-1[101]                 350   35.00%      35.00  [L] 85.71% [S] 14.29%"
	assert_line "  [S]   5.00%  50 samples  (14.29% of thread)  state R"
	run -0 grep -c '^app\[100\] / ' <<< "$output"
	assert_output 2
	# Without thread ids or names in the data: a clear error.
	run --separate-stderr "$OFFS" report --by thread "$D61"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample report: --by thread needs thread ids or names, but the data has none (key: comm); record with key=tid or key=tname"
	run --separate-stderr "$OFFS" report --by nothing "$D61"
	assert_failure 2
	run --separate-stderr "$OFFS" report --top 0 "$D61"
	assert_failure 2
}

@test "report: live stacks without FILE, stdin with -, several files merged, v2 user frames" {
	run -0 "$OFFS" report --include-idle
	assert_line "# input: $FP/stacks"
	assert_line "# samples: 1000"
	run -0 "$OFFS" report --include-idle - < "$SMALL"
	assert_line "# input: stdin"
	run -0 "$OFFS" report --include-idle "$SMALL" "$SMALL"
	assert_line "# samples: 2000"
	assert_line "# duration: 20.000 s"
	assert_line "# source: drain, 2 generations 7..7"
	assert_line "  [L] lock               1000   50.00%     100.00"
	run -0 "$OFFS" report "$V2"
	assert_line "      --"
	assert_line "      std::mutex::lock() (cxxapp)"
	assert_line "      [anon]+0x7f3a1c000000"
	assert_line "      [raced]"
	run -0 "$OFFS" report --offsets "$V2"
	assert_line "      std::mutex::lock()+0x9 (cxxapp)"
}

@test "report: v2 wobj and cgroup per stack (exact); --by cgroup, --by wobj" {
	run --separate-stderr "$OFFS" report --include-idle "$V2S"
	assert_success
	assert_equal "$stderr" ""
	assert_line "# wobj: the system call or object waited on (key=wobj); cgroup: cgroup v2 path"
	assert_line "# symbolized: offsample-symbolize on $(uname -n)"
	run -0 grep -A 20 '^\[L\] lock: ' <<< "$output"
	assert_output - <<'EOF'
[L] lock: 60 samples, 60.00% of all; top 1 of 1 stack

  [L]  60.00%  60 samples  (100.00% of lock)  state S
      processes: app[100] 60
      wobj: futex(0x5581a0c0) 60
      cgroup: /system.slice/app.service 60
      __schedule
      schedule
      futex_wait_queue
      futex_wait
      do_futex
      __x64_sys_futex
      do_syscall_64
      entry_SYSCALL_64_after_hwframe
      --
      __lll_lock_wait (libc.so.6)
      pthread_mutex_lock (libc.so.6)
      cache_get (app)
      worker_main (app)
      start_thread (libc.so.6)
      clone3 (libc.so.6)
EOF
	run -0 "$OFFS" report --include-idle "$V2S"
	assert_line "      wobj: clock_nanosleep 10, - 3"
	assert_line "      wobj: pread64(/var/lib/app/a\\x3bb.db) 25"
	assert_line "      /opt/offsample-fixture/bin/app+0x2a05 (missing)"
	assert_line "      /usr/bin/env+0x4b21 (replaced)"
	# The kernel thread has no wait object: no wobj line, its cgroup "/".
	run -0 grep -A 3 '^  \[D\] \+[0-9.]\+%' <<< "$output"
	assert_line --index 2 "      cgroup: / 2"
	assert_line --index 3 "      __schedule"
	# v1 data: no such lines.
	run -0 "$OFFS" report "$SMALL"
	refute_output --partial "wobj"
	refute_output --partial "cgroup:"

	run -0 "$OFFS" report --include-idle --by cgroup "$V2S"
	assert_output --partial "$(cat <<'EOF'
Samples by cgroup:

  cgroup                        samples  percent   thread-s  reasons
  /system.slice/app.service          85   85.00%       8.50  [L] 70.59% [I] 29.41%
  /system.slice/cron.service         13   13.00%       1.30  [Z] 100.00%
  /                                   2    2.00%       0.20  [D] 100.00%
EOF
)"
	assert_line "/system.slice/app.service: 85 samples, 85.00% of all; top 2 of 2 stacks"
	assert_line "  [L]  60.00%  60 samples  (70.59% of cgroup)  state S"
	run -0 "$OFFS" report --include-idle --by wobj --top 1 "$V2S"
	assert_output --partial "$(cat <<'EOF'
Samples by wobj:

  wobj                               samples  percent   thread-s  reasons
  futex(0x5581a0c0)                       60   60.00%       6.00  [L] 100.00%
  pread64(/var/lib/app/a\x3bb.db)         25   25.00%       2.50  [I] 100.00%
  clock_nanosleep                         10   10.00%       1.00  [Z] 100.00%
  -                                        5    5.00%       0.50  [Z] 60.00% [D] 40.00%
EOF
)"
	assert_line "futex(0x5581a0c0): 60 samples, 60.00% of all; top 1 of 1 stack"
	refute_line --regexp '^pread64'
	# v1 data has no such column.
	run --separate-stderr "$OFFS" report --by cgroup "$SMALL"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample report: --by cgroup needs stacks format v2 (a cgroup column), but the data is v1"
	run --separate-stderr "$OFFS" report --by nothing "$V2S"
	assert_failure 2
	assert_equal "$stderr" 'offsample report: --by needs reason, process, thread, cgroup or wobj, not "nothing" (see offsample report --help)'
}

@test "report: malformed lines warned once; empty, garbage or missing input: exit 1" {
	run --separate-stderr "$OFFS" report "$TFIX/malformed.stacks"
	assert_success
	assert_equal "$stderr" "offsample report: skipped 4 malformed lines"
	assert_line "  [Z] sleep                40  100.00%       4.44"
	: > "$T/empty"
	run --separate-stderr "$OFFS" report "$T/empty"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample report: no offsample stacks in input (empty)"
	printf 'hello\nworld\n' > "$T/garbage"
	run --separate-stderr "$OFFS" report "$T/garbage"
	assert_failure 1
	assert_equal "$stderr" "offsample report: no offsample stacks in input (2 malformed lines)"
	run --separate-stderr "$OFFS" report "$T/missing"
	assert_failure 1
	assert_equal "$stderr" "offsample report: $T/missing: no such file"
	# A valid but empty generation is not an error.
	head -n 16 "$SMALL" > "$T/nogen"
	"$ROOT/tests/lib/restamp-stacks" "$T/nogen"
	run -0 "$OFFS" report "$T/nogen"
	assert_line "No samples."
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" report
	assert_failure 1
	assert_regex "$stderr" "^offsample report: module not loaded"
}

# ------------------------------------------------------------ collapse

@test "collapse: live stacks by default, options passed to stackcollapse-offsample" {
	run --separate-stderr "$OFFS" collapse
	assert_success
	assert_equal "$output" "$("$SCO" "$SMALL")"
	run -0 "$OFFS" collapse --kernel-suffix --show pid "$SMALL"
	assert_line "idle;kworker/0:1;20;ret_from_fork_[k];kthread_[k];worker_thread_[k];schedule_[k];__schedule_[k] 80"
	run -0 "$OFFS" collapse - < "$D612"
	assert_equal "$output" "$("$SCO" "$D612")"
	run --separate-stderr "$OFFS" collapse "$T/empty-file-missing"
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	: > "$T/empty"
	run --separate-stderr "$OFFS" collapse "$T/empty"
	assert_failure 1
	assert_output ""
	assert_equal "${#stderr_lines[@]}" 1
	OFFSAMPLE_PROC=$T/absent run --separate-stderr "$OFFS" collapse
	assert_failure 1
	assert_regex "$stderr" "module not loaded"
}

@test "collapse: user frames not named yet go through offsample-symbolize; --no-symbolize; v2 options" {
	run --separate-stderr "$OFFS" collapse "$V2S"
	assert_success
	assert_equal "$stderr" ""
	assert_output - <<'EOF'
idle;kworker/u4:2;ret_from_fork;kthread;worker_thread;schedule;__schedule 2
io;app;app+0x1f00 (missing);app+0x2a05 (missing);libc.so.6+0x10a3b1 (missing);entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_pread64;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule 25
lock;app;clone3;start_thread;worker_main;cache_get;pthread_mutex_lock;__lll_lock_wait;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 60
sleep;env;[anon];env+0x3a10 (replaced);env+0x4b21 (replaced);[vdso];entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 13
EOF
	# Standard input and the live file the same way.
	run -0 "$OFFS" collapse - < "$V2S"
	assert_line --partial "app+0x1f00 (missing);"
	cp "$V2S" "$FP/stacks"
	run -0 "$OFFS" collapse --user-only
	assert_line "sleep;env;[anon];env+0x3a10 (replaced);env+0x4b21 (replaced);[vdso] 13"
	# --no-symbolize: exactly what stackcollapse-offsample gives.
	run -0 "$OFFS" collapse --no-symbolize "$V2S"
	assert_equal "$output" "$("$SCO" "$V2S")"
	run -0 "$OFFS" collapse --wobj --show cgroup --dso --offsets "$V2S"
	assert_line "lock;/system.slice/app.service;app;futex(0x5581a0c0);clone3+0x3c (libc.so.6);start_thread+0x2f2 (libc.so.6);worker_main+0x5c (app);cache_get+0x31 (app);pthread_mutex_lock+0x94 (libc.so.6);__lll_lock_wait+0x2d (libc.so.6);entry_SYSCALL_64_after_hwframe+0x6e/0xd8;do_syscall_64+0x5d/0xb0;__x64_sys_futex+0x8e/0x1d0;do_futex+0x106/0x1b0;futex_wait+0x185/0x270;futex_wait_queue+0x60/0x90;schedule+0x5a/0xd0;__schedule+0x34d/0xa00 60"
	# Already symbolized input (a "# symbolized:" line) is not run again;
	# v1 input never.
	"$ROOT/tools/offsample-symbolize" "$V2S" > "$T/sym"
	sed -i 's/(missing)/(gone)/g' "$T/sym"
	run -0 "$OFFS" collapse --user-only "$T/sym"
	assert_line "io;app;app+0x1f00 (gone);app+0x2a05 (gone);libc.so.6+0x10a3b1 (gone) 25"
}

# A prefix with the CLI, the collapser and the given symbolizer stand-in.
prefix_with_symbolizer() {
	P=$T/prefix
	mkdir -p "$P/sbin" "$P/bin" "$P/share/offsample/lib"
	cp "$OFFS" "$SCO" "$P/sbin/"
	cp "$ROOT"/tools/lib/* "$P/share/offsample/lib/"
	cp "$FG" "$P/bin/"
	if [ -n "$1" ]; then
		printf '%s\n' '#!/bin/sh' "$1" > "$P/bin/offsample-symbolize"
		chmod +x "$P/bin/offsample-symbolize"
	fi
}

@test "collapse, report, flamegraph: a failing or missing symbolizer loses nothing: raw frames, one warning" {
	# Temporary files in a folder of this test's own, so that another
	# offsample process on the machine cannot be taken for a leftover.
	export TMPDIR=$T/tmp
	mkdir "$TMPDIR"
	prefix_with_symbolizer 'echo "offsample-symbolize: something broke" >&2; echo partial; exit 1'
	run --separate-stderr "$P/sbin/offsample" collapse "$V2S"
	assert_success
	assert_equal "$stderr" "offsample collapse: warning: offsample-symbolize failed (something broke); user frames are not named"
	assert_equal "$output" "$("$SCO" "$V2S")"
	run --separate-stderr "$P/sbin/offsample" report "$V2S"
	assert_success
	assert_equal "$stderr" "offsample report: warning: offsample-symbolize failed (something broke); user frames are not named"
	assert_line "      /opt/offsample-fixture/bin/app+0x2a05"
	run --separate-stderr "$P/sbin/offsample" flamegraph -o "$T/f.svg" "$V2S"
	assert_success
	assert_equal "$stderr" "offsample flamegraph: warning: offsample-symbolize failed (something broke); user frames are not named"
	run -0 grep -c 'data-n="app+0x2a05"' "$T/f.svg"
	# Several files: one warning.
	run --separate-stderr "$P/sbin/offsample" collapse "$V2S" "$V2S"
	assert_success
	assert_equal "${#stderr_lines[@]}" 1
	# Not needed (v1, or --no-symbolize): not run, no warning.
	run --separate-stderr "$P/sbin/offsample" collapse "$SMALL"
	assert_equal "$stderr" ""
	run --separate-stderr "$P/sbin/offsample" collapse --no-symbolize "$V2S"
	assert_equal "$stderr" ""
	# Missing altogether (and not on PATH).
	rm "$P/bin/offsample-symbolize"
	run --separate-stderr env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" "$P/sbin/offsample" collapse "$V2S"
	assert_success
	assert_equal "$stderr" "offsample collapse: warning: offsample-symbolize not found; user frames are not named (--no-symbolize skips this)"
	assert_equal "$output" "$("$SCO" "$V2S")"
	# Found in bin/ of an installed tree.
	cp "$ROOT/tools/offsample-symbolize" "$P/bin/"
	run --separate-stderr env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" "$P/sbin/offsample" collapse "$V2S"
	assert_equal "$stderr" ""
	assert_line --partial ";app+0x2a05 (missing);"
	# The temporary files are gone: every command above used TMPDIR.
	run -0 find "$TMPDIR" -mindepth 1
	assert_output ""
}

# ------------------------------------------------------------ flamegraph

@test "flamegraph: valid SVG with the offcpu palette, reasons, frames and a title from the header" {
	run --separate-stderr "$OFFS" flamegraph --include-idle "$D61"
	assert_success
	assert_equal "$stderr" ""
	printf '%s\n' "$output" > "$T/out.svg"
	run -0 xmllint --noout "$T/out.svg"
	run -0 grep -c 'data-n="do_nanosleep"' "$T/out.svg"
	run -0 grep -c 'data-n="osw-sleep"' "$T/out.svg"
	run -0 grep -c 'data-n="futex_wait_queue"' "$T/out.svg"
	local r
	for r in io lock sched sleep net ipc idle; do
		grep -q "data-n=\"$r\"" "$T/out.svg" || { echo "no $r frame"; return 1; }
	done
	run -0 grep -c 'Off-CPU time: virtme-ng, 6.1.0-56-amd64, 8.4 s' "$T/out.svg"
	run -0 grep -c "$(sed -n 's/^# samples: //p' "$D61") samples at 19 Hz" "$T/out.svg"
	# The offcpu legend (only that palette has one).
	run -0 grep -c 'idle 59.9%' "$T/out.svg"
}

@test "flamegraph: the default title says on-CPU time is in it when running threads were sampled" {
	run -0 "$OFFS" flamegraph "$SFIX/oncpu-spin-v3-6.12.117.txt"
	assert_output --partial '>Off- and on-CPU time: virtme-ng, 6.12.117+deb12-amd64, '
	refute_output --partial '>Off-CPU time:'
	run -0 "$OFFS" flamegraph --reason sleep "$SFIX/oncpu-spin-v3-6.12.117.txt"
	assert_output --partial '>Off-CPU time: virtme-ng, 6.12.117+deb12-amd64, '
	run -0 "$OFFS" flamegraph --critical "$SFIX/oncpu-crit-v3-6.12.117.txt"
	assert_output --partial '>Critical path (waits caused and GAPP weights): virtme-ng, '
}

@test "flamegraph: -o FILE, --title, collapse options, renderer options after --" {
	run --separate-stderr "$OFFS" flamegraph -o "$T/g.svg" --title "My graph" --no-comm "$SMALL" -- --width 1600 --reverse
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
	run -0 xmllint --noout "$T/g.svg"
	run -0 grep -c '<svg[^>]* width="1600"' "$T/g.svg"
	run -0 grep -c '>My graph<' "$T/g.svg"
	run -1 grep -c 'data-n="cron"' "$T/g.svg"
	# Replaced by a rename: another name of the old file keeps the old SVG.
	ln "$T/g.svg" "$T/g.old"
	run -0 "$OFFS" flamegraph -o "$T/g.svg" --title "Second" "$SMALL"
	run -0 grep -c '>My graph<' "$T/g.old"
	run -0 grep -c '>Second<' "$T/g.svg"
	# Live stacks without FILE.
	run -0 "$OFFS" flamegraph
	assert_output --partial 'data-n="cron"'
	assert_output --partial 'Off-CPU time: testhost, 6.1.0-56-amd64, 10.0 s'
}

@test "flamegraph: failures leave no SVG: bad input, bad renderer option, unwritable -o" {
	: > "$T/empty"
	run --separate-stderr "$OFFS" flamegraph "$T/empty"
	assert_failure 1
	assert_output ""
	assert_equal "${#stderr_lines[@]}" 1
	echo old > "$T/keep.svg"
	run --separate-stderr "$OFFS" flamegraph -o "$T/keep.svg" "$SMALL" -- --colors=nonsense
	assert_failure
	assert_output ""
	assert_equal "$(cat "$T/keep.svg")" old
	run --separate-stderr "$OFFS" flamegraph -o "$T/nodir/x.svg" "$SMALL"
	assert_failure 1
	assert_equal "$stderr" "offsample flamegraph: cannot write $T/nodir/x.svg"
	run -0 ls -A "$T"
	refute_output --partial ".offsample-svg"
	run --separate-stderr "$OFFS" flamegraph --engine nosuch "$SMALL"
	assert_failure 2
	assert_equal "${#stderr_lines[@]}" 1
}

@test "flamegraph --engine flamegraph.pl: clear error when absent; FLAMEGRAPH_DIR used when set" {
	PATH=/usr/bin:/bin FLAMEGRAPH_DIR= run --separate-stderr "$OFFS" flamegraph --engine flamegraph.pl "$SMALL"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample flamegraph: flamegraph.pl not found: set FLAMEGRAPH_DIR to a FlameGraph checkout or put flamegraph.pl on PATH"
	# A stand-in flamegraph.pl that shows what it was given.
	mkdir -p "$T/fg"
	cat > "$T/fg/flamegraph.pl" <<'EOF'
#!/usr/bin/perl
print "<svg xmlns=\"http://www.w3.org/2000/svg\"><desc>ARGS: @ARGV[0..$#ARGV-1]</desc>";
open(my $f, '<', $ARGV[-1]) or die; my $n = 0; $n++ while <$f>;
print "<desc>LINES: $n</desc></svg>\n";
EOF
	FLAMEGRAPH_DIR=$T/fg run --separate-stderr "$OFFS" flamegraph --include-idle --engine flamegraph.pl "$SMALL" -- --width 900
	assert_success
	assert_output --partial "ARGS: --colors=io --countname=thread-seconds --title Off-CPU time: testhost, 6.1.0-56-amd64, 10.0 s"
	assert_output --partial "--width 900"
	assert_output --partial "LINES: 7"
	FLAMEGRAPH_DIR=$T/fg run -0 "$OFFS" flamegraph --samples --include-idle --engine flamegraph.pl "$SMALL"
	assert_output --partial "ARGS: --colors=io --countname=samples --title Off-CPU time"
	# Found on PATH too.
	PATH=$T/fg:/usr/bin:/bin FLAMEGRAPH_DIR= run -0 "$OFFS" flamegraph --include-idle --engine=flamegraph.pl "$SMALL"
	assert_output --partial "LINES: 7"
}

@test "flamegraph --engine flamegraph.pl: the real one draws the thread-seconds collapse gives" {
	need_fgpl
	FLAMEGRAPH_DIR=${FGPL%/*} run -0 "$OFFS" flamegraph --include-idle --engine flamegraph.pl -o "$T/r.svg" "$SMALL"
	xmllint --noout "$T/r.svg"
	grep -q '>Off-CPU time: testhost, 6.1.0-56-amd64, 10.0 s<' "$T/r.svg"
	# 1,000 samples at 10 Hz; each reason's root frame weighs its
	# samples / 10 as offsample collapse counts them.
	grep -qF '<title>all (100 thread-seconds, 100%)</title>' "$T/r.svg"
	"$OFFS" collapse --include-idle "$SMALL" > "$T/r.folded"
	for r in idle io lock; do
		n=$(awk -v r="$r" 'index($0, r ";") == 1 { s += $NF } END { print s / 10 }' "$T/r.folded")
		echo "$r: $n"
		[ "$n" != 0 ]
		grep -qF "<title>$r ($n thread-seconds, " "$T/r.svg"
	done
}

# ------------------------------------------------------------ environment

@test "cron environment: minimal PATH, no HOME, no terminal, other cwd" {
	mkdir "$T/cwd" "$T/snaps"
	cd "$T/cwd"
	run --separate-stderr env -i PATH=/usr/bin:/bin OFFSAMPLE_PROC="$FP" OFFSAMPLE_SYS="$FS" \
		"$OFFS" snapshot "$T/snaps" < /dev/null
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
	run -0 env -i PATH=/usr/bin:/bin "$OFFS" flamegraph -o "$T/cron.svg" "$T"/snaps/offsample-*.stacks < /dev/null
	run -0 xmllint --noout "$T/cron.svg"
	run -0 env -i PATH=/usr/bin:/bin "$OFFS" report --include-idle "$T"/snaps/offsample-*.stacks < /dev/null
	assert_line "# samples: 1000"
	run -0 env -i PATH=/usr/bin:/bin OFFSAMPLE_PROC="$FP" OFFSAMPLE_SYS="$FS" \
		"$OFFS" status < /dev/null
	run -0 env -i "$OFFS" report --include-idle "$SMALL"
}

@test "installed layout: sbin/offsample through a symlink, helpers in share/ and bin/" {
	local p=$T/prefix
	mkdir -p "$p/sbin" "$p/bin" "$p/share/offsample/lib" "$T/links"
	cp "$OFFS" "$SCO" "$SCP" "$p/sbin/"
	cp "$ROOT"/tools/lib/* "$p/share/offsample/lib/"
	cp "$FG" "$p/bin/"
	ln -s "$p/sbin/offsample" "$T/links/offsample"
	run --separate-stderr env -i PATH=/usr/bin:/bin "$T/links/offsample" flamegraph "$SMALL"
	assert_success
	assert_output --partial 'data-n="cron"'
	run -0 env -i PATH=/usr/bin:/bin "$T/links/offsample" report --include-idle "$SMALL"
	assert_line "# samples: 1000"
	# Collapser found on PATH when not next to the CLI (as installed:
	# the reader inline, see the next test).
	rm "$p/sbin/stackcollapse-offsample"
	mkdir "$T/pathbin"
	perl "$ROOT/packaging/inline-reader.pl" "$SCO" "$ROOT/tools/lib/OffsampleStacks.pm" 9.9.9 > "$T/pathbin/stackcollapse-offsample"
	chmod 755 "$T/pathbin/stackcollapse-offsample"
	run -0 env -i PATH="$T/pathbin:/usr/bin:/bin" "$T/links/offsample" collapse "$SMALL"
	assert_line "sleep;cron;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 100"
	run --separate-stderr env -i PATH=/usr/bin:/bin "$T/links/offsample" collapse "$SMALL"
	assert_failure 1
	assert_regex "$stderr" "^offsample collapse: stackcollapse-offsample not found"
}

@test "stand-alone tools: installed with the stacks reader inline, each works alone; a checkout copy alone says where the reader is" {
	local t out=$T/alone
	mkdir -p "$out" "$T/raw"
	DESTDIR=$T/dest PREFIX=/usr MODULE=none run -0 "$ROOT/packaging/install.sh" install
	for t in stackcollapse-offsample offsample-symbolize stackcollapse-procstat; do
		# One file: no reader block to find, the reader's code inside.
		run -1 grep -c '^use OffsampleStacks' "$T/dest/usr/sbin/$t"
		run -0 grep -c '^package OffsampleStacks;' "$T/dest/usr/sbin/$t"
		cp "$T/dest/usr/sbin/$t" "$out/"
		run -0 "$out/$t" --version
		assert_output "$t $(cat "$ROOT/VERSION")"
		# A copy of the checkout's file alone: a message, exit 1.
		cp "$ROOT/tools/$t" "$T/raw/"
		run --separate-stderr "$T/raw/$t" --version
		assert_failure 1
		assert_output ""
		assert_equal "$stderr" "$t: OffsampleStacks.pm is neither in $T/raw/lib nor in $T/raw/../share/offsample/lib: run it from the checkout, or copy the installed one (make install puts the reader inline)"
	done
	# The same output as the checkout's tools, errors included.
	assert_equal "$("$out/stackcollapse-offsample" --pid --wobj "$D61")" "$("$SCO" --pid --wobj "$D61")"
	assert_equal "$("$out/stackcollapse-offsample" --cgroup "$V2S")" "$("$SCO" --cgroup "$V2S")"
	assert_equal "$("$out/stackcollapse-procstat" "$SFIX/workload-threads-6.1.0.txt")" "$("$SCP" "$SFIX/workload-threads-6.1.0.txt")"
	assert_equal "$("$out/offsample-symbolize" --no-cache "$V2S")" "$("$ROOT/tools/offsample-symbolize" --no-cache "$V2S")"
	run --separate-stderr "$out/stackcollapse-offsample" "$T/none"
	assert_failure 1
	assert_equal "$stderr" "stackcollapse-offsample: cannot read $T/none: no such file or directory"
}

@test "flamegraph gives our renderer --colors=offcpu, the title and kernel frames with _[k]" {
	local p=$T/prefix
	mkdir -p "$p/sbin" "$p/bin" "$p/share/offsample/lib"
	cp "$OFFS" "$SCO" "$p/sbin/"
	cp "$ROOT"/tools/lib/* "$p/share/offsample/lib/"
	cat > "$p/bin/offsample-flamegraph" <<'STUB'
#!/usr/bin/perl
print "ARG: $_\n" for @ARGV[0 .. $#ARGV - 1];
open(my $f, '<', $ARGV[-1]) or die; print "IN: $_" while <$f>;
STUB
	run --separate-stderr "$p/sbin/offsample" flamegraph --include-idle "$SMALL" -- --width 700
	assert_success
	assert_line "ARG: --colors=offcpu"
	assert_line "ARG: --title"
	assert_line "ARG: Off-CPU time: testhost, 6.1.0-56-amd64, 10.0 s"
	assert_line "ARG: --subtitle"
	assert_line "ARG: 1000 samples at 10 Hz, 2023-11-14T22:13:20Z to 2023-11-14T22:13:30Z, offsample 0.1.0; widths: thread-seconds"
	# Widths in thread-seconds by default (80 samples at 10 Hz: 8 s).
	assert_line --index 1 "ARG: --countname"
	assert_line --index 2 "ARG: thread-seconds"
	assert_line --index 3 "ARG: --seconds"
	# Our options first, the user's after (they win).
	assert_line --index 8 "ARG: --width"
	assert_line --index 9 "ARG: 700"
	assert_line "IN: idle;kworker/0:1;ret_from_fork_[k];kthread_[k];worker_thread_[k];schedule_[k];__schedule_[k] 8"
	# --samples: sample counts.
	run -0 "$p/sbin/offsample" flamegraph --samples --include-idle --no-kernel-suffix "$SMALL"
	assert_line --index 2 "ARG: samples"
	refute_line "ARG: --seconds"
	assert_line "ARG: 1000 samples at 10 Hz, 2023-11-14T22:13:20Z to 2023-11-14T22:13:30Z, offsample 0.1.0; widths: samples"
	assert_line "IN: idle;kworker/0:1;ret_from_fork;kthread;worker_thread;schedule;__schedule 80"
}

@test "harness: run -0 leaves the test's loop variable alone (tests/lib/bats-fix.bash)" {
	local i n=0
	for i in 1 2 3; do
		run -0 true
		n=$((n + 1))
		[ "$i" = "$n" ]
	done
}
