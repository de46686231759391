#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tools/stackcollapse-offsample and tools/stackcollapse-procstat on their
# own: exact folded output, options, odd names, malformed input, errors.
#
#   bats tests/host/tools-collapse.bats

load tools-common

setup() {
	T=$BATS_TEST_TMPDIR
}

# ------------------------------------------------------------ offsample

@test "stackcollapse-offsample --help: usage on stdout, exit 0" {
	run --separate-stderr "$SCO" --help
	assert_success
	assert_output --partial "Usage: stackcollapse-offsample"
	assert_output --partial "--kernel-suffix"
	assert_equal "$stderr" ""
	run -0 "$SCO" -h
	assert_output --partial "Usage:"
}

@test "stackcollapse-offsample: exact folded lines of a small file, root first" {
	run --separate-stderr "$SCO" "$SMALL"
	assert_success
	assert_equal "$stderr" ""
	assert_output - <<'EOF'
idle;kworker/0:1;ret_from_fork;kthread;worker_thread;schedule;__schedule 80
io;app;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule 150
lock;app;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 500
net;Web Content;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_epoll_wait;do_epoll_wait;schedule_hrtimeout_range_clock;schedule;__schedule 100
other;odd\x3bname;[truncated];odd_wait [mymod];[unknown];schedule;__schedule 20
sched;app;asm_sysvec_apic_timer_interrupt;irqentry_exit_to_user_mode;exit_to_user_mode_prepare;schedule;__schedule 50
sleep;cron;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 100
EOF
}

@test "stackcollapse-offsample: --no-reason --no-comm, --pid --tid --tname" {
	run -0 "$SCO" --no-reason --no-comm "$SMALL"
	assert_line "ret_from_fork;kthread;worker_thread;schedule;__schedule 80"
	assert_line "entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 500"
	run -0 "$SCO" --pid --tid --tname "$SMALL"
	assert_line "lock;app;100;101;app-worker-1;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 300"
	assert_line "lock;app;100;102;app-worker-2;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 200"
	assert_line "net;Web Content;300;310;Socket Thread;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_epoll_wait;do_epoll_wait;schedule_hrtimeout_range_clock;schedule;__schedule 100"
	assert_line "other;odd\\x3bname;400;400;odd\\x5cthread;[truncated];odd_wait [mymod];[unknown];schedule;__schedule 20"
	# Data recorded with key=comm has no ids: "-" frames.
	run -0 "$SCO" --pid --tname "$D61"
	assert_line --regexp "^sleep;osw-sleep;-;-;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule [0-9]+\$"
	refute_line --regexp "^sleep;osw-sleep;[0-9]"
}

@test "stackcollapse-offsample: --kernel-suffix, --offsets, --no-modules" {
	run -0 "$SCO" --kernel-suffix "$SMALL"
	assert_line "idle;kworker/0:1;ret_from_fork_[k];kthread_[k];worker_thread_[k];schedule_[k];__schedule_[k] 80"
	assert_line "other;odd\\x3bname;[truncated]_[k];odd_wait [mymod]_[k];[unknown]_[k];schedule_[k];__schedule_[k] 20"
	run -0 "$SCO" --offsets "$SMALL"
	assert_line "idle;kworker/0:1;ret_from_fork+0x22/0x30;kthread+0xda/0x100;worker_thread+0xaf/0x380;schedule+0x5a/0xd0;__schedule+0x34d/0xa00 80"
	assert_line "other;odd\\x3bname;[truncated];odd_wait+0x1c7/0x4e0 [mymod];[unknown];schedule+0x5a/0xd0;__schedule+0x34d/0xa00 20"
	run -0 "$SCO" --no-modules "$SMALL"
	assert_line "other;odd\\x3bname;[truncated];odd_wait;[unknown];schedule;__schedule 20"
	# A real module frame from the 6.1 capture.
	run -0 "$SCO" "$D61"
	assert_line --regexp "^idle;scsi_eh_0;ret_from_fork;kthread;scsi_error_handler \[scsi_mod\];schedule;__schedule [0-9]+\$"
}

@test "stackcollapse-offsample: real captures: flamegraph.pl regex, root first, totals per reason" {
	local f
	for f in "$D61" "$D612" "$SFIX/workload-spin-6.1.0.txt" "$SFIX/workload-spin-6.12.117.txt" \
		 "$D61V2" "$D612V2" "$SFIX/workload-spin-v2-6.1.0.txt" "$SFIX/workload-spin-v2-6.12.117.txt"; do
		"$SCO" "$f" > "$T/folded"
		# Every line parses as flamegraph.pl expects.
		run -0 perl -ne "chomp; \$bad++ unless /$FOLDED_RE/; END { print \$bad // 0 }" "$T/folded"
		assert_output 0
		# Root first: the reason, then the comm; the leaf is the scheduler.
		run -0 awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";");
			if (f[1] !~ /^(io|lock|sched|sleep|net|ipc|fault|stopped|idle|other)$/ || f[n] != "__schedule") bad++ }
			END { print bad + 0 }' "$T/folded"
		assert_output 0
		# Nothing lost or invented: totals per reason equal the input's.
		assert_equal "$(reason_totals_folded "$T/folded")" "$(reason_totals_stacks "$f")"
		assert_equal "$(awk '{ s += $NF } END { print s }' "$T/folded")" \
			"$(sed -n 's/^# samples: //p' "$f")"
	done
	# Identical stacks of different threads are summed: the osw-sleep
	# workload (3 threads + the extra one) is one line.
	run -0 grep -c '^sleep;osw-sleep;' <("$SCO" "$D61")
	assert_output 1
}

@test "stackcollapse-offsample: concatenated files and stdin; sums identical stacks" {
	cat "$SMALL" "$SMALL" > "$T/two"
	run -0 "$SCO" "$T/two"
	assert_line "lock;app;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule 1000"
	assert_line "other;odd\\x3bname;[truncated];odd_wait [mymod];[unknown];schedule;__schedule 40"
	run -0 "$SCO" "$SMALL" - < "$SMALL"
	assert_line "sleep;cron;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 200"
	# No FILE and a non-terminal stdin: stdin.
	run -0 bash -c '"$1" < "$2"' _ "$SCO" "$SMALL"
	assert_equal "${#lines[@]}" 7
	# Files with different column sets mix: the v2 file after a v1 file;
	# their rates differ (10 and 5 Hz): a warning.
	run -0 --separate-stderr "$SCO" "$SMALL" "$V2"
	assert_equal "${#lines[@]}" 10
	assert_equal "$stderr" "stackcollapse-offsample: warning: the inputs were sampled at different rates (5, 10 Hz): their sample counts do not add up; --seconds weighs each by 1/hz"
}

@test "stackcollapse-offsample: fields found by the columns header; v1 order without it" {
	# Columns permuted, plus an unknown extra column.
	{
		echo '# offsample stacks v3'
		echo '# columns: reason kstack extra count comm state pid tid tname'
		printf 'lock\t__schedule+0x1/0x2;schedule+0x3/0x4;futex_wait+0x5/0x6\tZZZ\t42\tperm\tS\t-\t-\t-\n'
	} > "$T/perm"
	run -0 "$SCO" "$T/perm"
	assert_output "lock;perm;futex_wait;schedule;__schedule 42"
	# No header at all: v1 order.
	printf '5\tio\tD\t-\t-\tnohdr\t-\tio_schedule+0x1/0x2;vfs_read+0x3/0x4\n' > "$T/nohdr"
	run -0 "$SCO" "$T/nohdr"
	assert_output "io;nohdr;vfs_read;io_schedule 5"
}

@test "stackcollapse-offsample: unknown reasons are kept" {
	{
		echo '# offsample stacks v1'
		printf '3\tcpu\tR\t-\t-\tspin\t-\tdo_work+0x1/0x2\n'
		printf '4\tfrobnicate\tS\t-\t-\tnew\t-\tnew_wait+0x1/0x2\n'
	} > "$T/unk"
	run -0 "$SCO" "$T/unk"
	assert_line "cpu;spin;do_work 3"
	assert_line "frobnicate;new;new_wait 4"
}

# The expected user part of the cxxapp record of v2-ustack.stacks.
cxx_user() {
	local long
	long=$(perl -e '$t="int"; for (1..12) { $t = "std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, $t>" } print "void Registry<$t>::insert(Key const&, Value&&) const"')
	printf '%s' "[anon];start_thread;Worker::run(std::map<int, std::string> const&);weird\\x3bsymbol;Vec::operator+(Vec const&) const;$long;std::mutex::lock();pthread_mutex_lock;__futex_abstimed_wait_common"
}
KFUTEX='entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule'

@test "stackcollapse-offsample: v2 ustack column: user frames between comm and kernel, odd names" {
	run --separate-stderr "$SCO" "$V2"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "${#lines[@]}" 3
	assert_line "lock;cxxapp;$(cxx_user);$KFUTEX 7"
	# Raw frames (FORMAT v2: PATH+0xOFFSET, paths with spaces) lose their
	# directory, pseudo frames ([vdso]+0x.., [anon]+0x..) their address,
	# [raced] stays; "# file:" lines between records are skipped.
	assert_line "sleep;my app;[raced];libc.so.6+0x2724a;my app+0x1234;[vdso];libc.so.6+0xeb8a5;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 3"
	# No user stack ("-"): kernel frames only.
	assert_line "io;dd;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule 2"
	# The escaped ";" stays escaped: the long line has exactly 2 + 9 + 8 frames.
	run -0 awk '/^lock;cxxapp;/ { sub(/ [0-9]+$/, ""); print split($0, f, ";") }' <("$SCO" "$V2")
	assert_output 19
	# Parsable by the flamegraph.pl regex, count 7.
	run -0 perl -ne "print \"\$2\\n\" if /^lock;/ && /$FOLDED_RE/" <("$SCO" "$V2")
	assert_output 7
}

@test "stackcollapse-offsample: --sep, --kernel-only, --user-only, --offsets on user frames" {
	run -0 "$SCO" --sep "$V2"
	assert_line "lock;cxxapp;$(cxx_user);-;$KFUTEX 7"
	# No separator when a part is empty.
	assert_line "io;dd;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule 2"
	run -0 "$SCO" --kernel-only --sep "$V2"
	assert_line "lock;cxxapp;$KFUTEX 7"
	run -0 "$SCO" --user-only "$V2"
	assert_line "lock;cxxapp;$(cxx_user) 7"
	assert_line "io;dd 2"
	run -0 "$SCO" --offsets --user-only "$V2"
	assert_line --partial "lock;cxxapp;[anon]+0x7f3a1c000000;start_thread+0x2f2;Worker::run(std::map<int, std::string> const&)+0x55;weird\\x3bsymbol+0x1;"
	assert_line "sleep;my app;[raced];libc.so.6+0x2724a;my app+0x1234;[vdso]+0x1a2b;libc.so.6+0xeb8a5 3"
	run -0 "$SCO" --dso --user-only "$V2"
	assert_line --partial "lock;cxxapp;[anon];start_thread (libc.so.6);Worker::run(std::map<int, std::string> const&) (cxxapp);weird\\x3bsymbol (libodd.so);"
	run -0 "$SCO" --dso --offsets --user-only "$V2"
	assert_line --partial "lock;cxxapp;[anon]+0x7f3a1c000000;start_thread+0x2f2 (libc.so.6);Worker::run(std::map<int, std::string> const&)+0x55 (cxxapp);weird\\x3bsymbol+0x1 (libodd.so);"
	run -0 "$SCO" --kernel-suffix --sep "$V2"
	assert_line --partial "__futex_abstimed_wait_common;-;entry_SYSCALL_64_after_hwframe_[k];"
	run -2 "$SCO" --kernel-only --user-only "$V2"
}

# The small v2 fixture: kernel parts of its stacks, root first.
KF2='entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule'
KIO2='entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_pread64;vfs_read;filemap_read;folio_wait_bit_common;io_schedule;schedule;__schedule'
KSL2='entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule'
ULOCK='clone3;start_thread;worker_main;cache_get;pthread_mutex_lock;__lll_lock_wait'

@test "stackcollapse-offsample: small v2 file: exact folded lines; a pure collapser (no symbolization)" {
	run --separate-stderr "$SCO" "$V2S"
	assert_success
	assert_equal "$stderr" ""
	assert_output - <<EOF
idle;kworker/u4:2;ret_from_fork;kthread;worker_thread;schedule;__schedule 2
io;app;app+0x1f00;app+0x2a05;libc.so.6+0x10a3b1;$KIO2 25
lock;app;$ULOCK;$KF2 60
sleep;env;[anon];env+0x3a10;env+0x4b21;[vdso];$KSL2 13
EOF
	# Totals are those of the file.
	assert_equal "$(reason_totals_folded <(printf '%s\n' "$output"))" "$(reason_totals_stacks "$V2S")"
	# User frames only in the user part: _[k] only on kernel frames.
	run -0 "$SCO" --kernel-suffix --sep "$V2S"
	assert_line "lock;app;$ULOCK;-;${KF2//;/_[k];}_[k] 60"
	assert_line "idle;kworker/u4:2;ret_from_fork_[k];kthread_[k];worker_thread_[k];schedule_[k];__schedule_[k] 2"
}

@test "stackcollapse-offsample: --cgroup after the reason, --wobj before the user frames" {
	run -0 "$SCO" --wobj "$V2S"
	assert_output - <<EOF
idle;kworker/u4:2;-;ret_from_fork;kthread;worker_thread;schedule;__schedule 2
io;app;pread64(/var/lib/app/a\x3bb.db);app+0x1f00;app+0x2a05;libc.so.6+0x10a3b1;$KIO2 25
lock;app;futex(0x5581a0c0);$ULOCK;$KF2 60
sleep;env;-;[anon];env+0x3a10;env+0x4b21;[vdso];$KSL2 3
sleep;env;clock_nanosleep;[anon];env+0x3a10;env+0x4b21;[vdso];$KSL2 10
EOF
	run -0 "$SCO" --cgroup --wobj --pid --tid --tname --user-only "$V2S"
	assert_output - <<'EOF'
idle;/;kworker/u4:2;-;-;-;- 2
io;/system.slice/app.service;app;100;103;app-io;pread64(/var/lib/app/a\x3bb.db);app+0x1f00;app+0x2a05;libc.so.6+0x10a3b1 25
lock;/system.slice/app.service;app;100;101;app-worker;futex(0x5581a0c0);clone3;start_thread;worker_main;cache_get;pthread_mutex_lock;__lll_lock_wait 40
lock;/system.slice/app.service;app;100;102;app-worker;futex(0x5581a0c0);clone3;start_thread;worker_main;cache_get;pthread_mutex_lock;__lll_lock_wait 20
sleep;/system.slice/cron.service;env;200;200;env;clock_nanosleep;[anon];env+0x3a10;env+0x4b21;[vdso] 10
sleep;/system.slice/cron.service;env;200;201;env-t;-;[anon];env+0x3a10;env+0x4b21;[vdso] 3
EOF
	run -0 "$SCO" --cgroup --no-reason --no-comm --kernel-only "$V2S"
	assert_line "/system.slice/app.service;$KF2 60"
	# v1 data has neither: "-" frames.
	run -0 "$SCO" --cgroup --wobj "$SMALL"
	assert_line "sleep;-;cron;-;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 100"
}

@test "stackcollapse-offsample: named, raw, replaced and missing user frames" {
	{
		sed -n '1,16p' "$V2S"
		printf '1\tio\tD\t-\t-\ta\t-\tio_schedule+0x1/0x2\t%s\t-\t/\n' \
			'f+0x1 (liba.so);/usr/lib/liba.so+0x10 (replaced);/usr/lib/x y/libb.so (deleted)+0x20 (missing);/opt/c+0x30;[busy]+0x7f00;[truncated]'
	} > "$T/kinds"
	"$ROOT/tests/lib/restamp-stacks" "$T/kinds"
	run -0 "$SCO" --user-only "$T/kinds"
	assert_output "io;a;[truncated];[busy];c+0x30;libb.so (deleted)+0x20 (missing);liba.so+0x10 (replaced);f 1"
	run -0 "$SCO" --user-only --offsets --dso "$T/kinds"
	assert_output "io;a;[truncated];[busy]+0x7f00;c+0x30;libb.so (deleted)+0x20 (missing);liba.so+0x10 (replaced);f+0x1 (liba.so) 1"
}

@test "stackcollapse-offsample: malformed lines skipped, counted, one warning" {
	run --separate-stderr "$SCO" "$TFIX/malformed.stacks"
	assert_success
	assert_output "sleep;sleeper;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 40"
	assert_equal "$stderr" "stackcollapse-offsample: skipped 4 malformed lines"
}

@test "stackcollapse-offsample: no valid record, empty input: exit 1, one line, no output" {
	printf 'not;a;stack 12\nhello\n' > "$T/bad"
	run --separate-stderr "$SCO" "$T/bad"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "stackcollapse-offsample: no valid offsample stack records in input (2 malformed lines)"
	: > "$T/empty"
	run --separate-stderr "$SCO" "$T/empty"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "stackcollapse-offsample: no offsample stack records in input"
	# The threads file is a different format, and the message says so.
	run --separate-stderr "$SCO" "$SFIX/workload-threads-6.1.0.txt"
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "use stackcollapse-procstat"
}

@test "stackcollapse-offsample: usage errors exit 2, missing file exits 1, one line each" {
	run --separate-stderr "$SCO" --bogus "$SMALL"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "stackcollapse-offsample: unknown option: bogus (see --help)"
	run --separate-stderr "$SCO" "$T/nonexistent"
	assert_failure 1
	assert_equal "$stderr" "stackcollapse-offsample: cannot read $T/nonexistent: no such file or directory"
	run --separate-stderr "$SCO" "$T"
	assert_failure 1
	assert_equal "$stderr" "stackcollapse-offsample: $T: is a directory"
}

@test "stackcollapse-offsample output is accepted by our renderer without ignored lines" {
	local f
	for f in "$D61" "$SMALL" "$V2"; do
		"$SCO" --kernel-suffix "$f" > "$T/folded"
		run --separate-stderr "$FG" --colors=offcpu "$T/folded"
		assert_success
		assert_equal "$stderr" ""
		printf '%s\n' "$output" > "$T/out.svg"
		run -0 xmllint --noout "$T/out.svg"
	done
	run -0 grep -c 'data-n="Worker::run(std::map&lt;int, std::string&gt; const&amp;)"' "$T/out.svg"
}

# ------------------------------------------------------------ procstat

@test "stackcollapse-procstat --help: usage on stdout, exit 0" {
	run --separate-stderr "$SCP" --help
	assert_success
	assert_output --partial "Usage: stackcollapse-procstat"
	assert_output --partial "--running"
	assert_equal "$stderr" ""
}

@test "stackcollapse-procstat: offsample threads file: reason root, running threads skipped" {
	local f n
	for f in "$SFIX/workload-threads-6.1.0.txt" "$SFIX/workload-threads-6.12.117.txt"; do
		"$SCP" "$f" > "$T/folded"
		# One thread per input line, minus the header and <running> ones.
		n=$(awk 'NR > 1 && !/<running>$/' "$f" | wc -l)
		assert_equal "$(awk '{ s += $NF } END { print s }' "$T/folded")" "$n"
		# Reasons per thread agree with the <reason:state> tokens.
		assert_equal "$(reason_totals_folded "$T/folded")" \
			"$(awk 'NR > 1 && !/<running>$/ { t = $NF; sub(/^</, "", t); sub(/:.*/, "", t); s[t]++ } END { for (r in s) print r, s[r] }' "$f" | sort)"
		run -1 grep -c '<running>' "$T/folded"
		assert_output 0
	done
	f=$SFIX/workload-threads-6.1.0.txt
	# The 3 threads of osw-mutex waiting for the lock: one line, count 3.
	n=$(awk '$3 == "osw-mutex" && $NF == "<lock:S>"' "$f" | wc -l)
	run -0 "$SCP" "$f"
	assert_line "lock;osw-mutex;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule $n"
	assert_line --regexp "^sleep;osw-sleep;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;common_nsleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule [0-9]+\$"
	# --running keeps them, as reason cpu.
	read -r pid tid comm tname < <(awk 'NR > 1 && $NF == "<running>" { print $1, $2, $3, $4; exit }' "$f")
	run -0 "$SCP" --running --tname --pid --tid "$f"
	assert_line "cpu;$comm;$pid;$tid;$tname;<running> 1"
	run -0 "$SCP" --no-reason --kernel-suffix "$f"
	assert_line --regexp "^osw-sleep;entry_SYSCALL_64_after_hwframe_\[k\];do_syscall_64_\[k\];__x64_sys_clock_nanosleep_\[k\];common_nsleep_\[k\];hrtimer_nanosleep_\[k\];do_nanosleep_\[k\];schedule_\[k\];__schedule_\[k\] [0-9]+\$"
}

@test "stackcollapse-procstat: FreeBSD procstat -ka (synthetic): exact output" {
	run --separate-stderr "$SCP" "$TFIX/freebsd-procstat-ka.synthetic.txt"
	assert_success
	assert_equal "$stderr" ""
	assert_output - <<'EOF'
getty;<swapped> 1
idle;fork_trampoline;fork_exit;sched_idletd;mi_switch 1
init;fast_syscall_common;amd64_syscall;sys_wait4;kern_wait6;_sleep;sleepq_wait_sig;sleepq_catch_signals;mi_switch 1
intr;fork_trampoline;fork_exit;ithread_loop;mi_switch 2
kernel;btext;swapper;_sleep;sleepq_timedwait;mi_switch 1
kernel;fork_trampoline;fork_exit;gtaskqueue_thread_loop;_sleep;sleepq_wait;mi_switch 2
sleep;fast_syscall_common;amd64_syscall;sys_nanosleep;kern_clock_nanosleep;_sleep;sleepq_timedwait_sig;sleepq_catch_signals;mi_switch 2
sshd;fast_syscall_common;amd64_syscall;sys_select;kern_select;_sleep;sleepq_wait_sig;sleepq_catch_signals;mi_switch 1
zfskern;fork_trampoline;fork_exit;l2arc_feed_thread;_cv_timedwait_sbt;sleepq_timedwait;mi_switch 1
EOF
	# Thread names with spaces are cut at the header's columns; a name
	# wider than its column falls back to splitting on white space.
	run -0 "$SCP" --tname --tid "$TFIX/freebsd-procstat-ka.synthetic.txt"
	assert_line "intr;100014;swi4: clock (0);fork_trampoline;fork_exit;ithread_loop;mi_switch 1"
	assert_line "intr;100015;swi1: netisr 0;fork_trampoline;fork_exit;ithread_loop;mi_switch 1"
	assert_line "zfskern;100062;l2arc_feed_thread;fork_trampoline;fork_exit;l2arc_feed_thread;_cv_timedwait_sbt;sleepq_timedwait;mi_switch 1"
	run -0 "$SCP" --running --tname "$TFIX/freebsd-procstat-ka.synthetic.txt"
	assert_line "cpu;idle;idle: cpu0;<running> 1"
}

@test "stackcollapse-procstat: FreeBSD procstat -kk (synthetic, wider columns): offsets stripped or kept" {
	run -0 "$SCP" --tname "$TFIX/freebsd-procstat-kk.synthetic.txt"
	assert_line "intr;swi4: clock (0);fork_trampoline;fork_exit;ithread_loop;mi_switch 1"
	assert_line "sleep;-;fast_syscall_common;amd64_syscall;sys_nanosleep;kern_clock_nanosleep;_sleep;sleepq_timedwait_sig;sleepq_catch_signals;mi_switch 2"
	run -0 "$SCP" --offsets "$TFIX/freebsd-procstat-kk.synthetic.txt"
	assert_line "kernel;btext+0x2c;swapper+0x85;_sleep+0x1fc;mi_switch+0xc2 1"
	assert_line "kernel;fork_trampoline+0xe;fork_exit+0x7e;gtaskqueue_thread_loop+0x141;_sleep+0x1fc;mi_switch+0xc2 2"
	# Same threads as -ka (the -kk file has fewer), same totals.
	run -0 awk '{ s += $NF } END { print s }' <("$SCP" "$TFIX/freebsd-procstat-kk.synthetic.txt")
	assert_output 9
	# Both layouts concatenated: each header sets its own columns.
	run -0 awk '{ s += $NF } END { print s }' <(cat "$TFIX/freebsd-procstat-ka.synthetic.txt" "$TFIX/freebsd-procstat-kk.synthetic.txt" | "$SCP")
	assert_output 21
}

@test "stackcollapse-procstat: malformed lines, empty input, usage errors" {
	{ cat "$TFIX/freebsd-procstat-ka.synthetic.txt"; echo "garbage line"; echo "  12 abc intr x y"; } > "$T/ka"
	run --separate-stderr "$SCP" "$T/ka"
	assert_success
	assert_equal "$stderr" "stackcollapse-procstat: skipped 2 malformed lines"
	assert_equal "${#lines[@]}" 9
	: > "$T/empty"
	run --separate-stderr "$SCP" "$T/empty"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "stackcollapse-procstat: no thread stacks in input"
	run --separate-stderr "$SCP" "$SMALL"
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	run --separate-stderr "$SCP" --frobnicate "$T/ka"
	assert_failure 2
	assert_equal "$stderr" "stackcollapse-procstat: unknown option: frobnicate (see --help)"
	run --separate-stderr "$SCP" "$T/none"
	assert_failure 1
	assert_equal "$stderr" "stackcollapse-procstat: cannot read $T/none: no such file or directory"
}

@test "stackcollapse-procstat: output rendered by our renderer (offcpu palette sees reasons)" {
	"$SCP" --kernel-suffix "$SFIX/workload-threads-6.12.117.txt" > "$T/folded"
	run --separate-stderr "$FG" --colors=offcpu "$T/folded"
	assert_success
	assert_equal "$stderr" ""
	printf '%s\n' "$output" > "$T/t.svg"
	run -0 xmllint --noout "$T/t.svg"
	run -0 grep -c 'data-n="osw-mutex"' "$T/t.svg"
	run -0 grep -c 'data-n="lock"' "$T/t.svg"
}

@test "collapse: Python frames (format v4) as QUALNAME (FILE:LINE), --dso keeps the path; report likewise" {
	local f=$SFIX/python-drain-v4-6.1.0.txt
	run -0 "$SCO" "$f"
	assert_line --regexp '^lock;python3\.11;.*;Thread\._bootstrap \(threading\.py:995\);Thread\._bootstrap_inner \(threading\.py:1038\);Thread\.run \(threading\.py:975\);python3\.11\+0x15c9d1;hold_lock \(offsample-pywait\.py:34\);.*futex_wait'
	refute_output --partial '[py]'
	run -0 "$SCO" --dso "$f"
	assert_output --partial ';hold_lock (/work/main/tests/workload/offsample-pywait.py:34);'
	run -0 "$OFFS" report "$f"
	assert_output --partial 'hold_lock (offsample-pywait.py:34)'
}
