#!/usr/bin/env bats
# Stress: thread churn at the highest rate, concurrent readers and drains,
# random parameter changes, load/unload cycles under load, a table far too
# small, memory pressure.  Pass: no splat in dmesg, no hung task, drains
# add up to the sampler's own total, memory back to its baseline.
#
# OFFS_STRESS=short (make test, ~2 minutes) or long (make stress,
# make test-debug); see tests/stress/lib.bash and docs/RELIABILITY.md.
#
# Kernels: every test kernel: races and memory pressure are the kernel's.
# Tests tagged once-1 or once-2 test only the module's own logic and run
# in one guest of make test (tests/guest/run.sh, OFFS_ONCE).

load lib
load ../stress/lib

setup_file() {
	load lib
	load ../stress/lib
	stress_setup
	echo "# stress mode: $STRESS_MODE ($(uname -r))" >> "$STRESS_RESULTS"
}

teardown() {
	stress_readers_stop 2>/dev/null || true
	[ -n "${CHURN_PID:-}" ] && { kill "$CHURN_PID" 2>/dev/null; wait "$CHURN_PID" 2>/dev/null || true; }
	workload_stop
	true
}

teardown_file() {
	load lib
	offs_unload
	rmdir /sys/fs/cgroup/offs-stress 2>/dev/null || true
}

# A loaded module, not yet sampling, and its memory with nothing in it.
load_for_stress() {
	offs_load enabled=0 "$@"
	BASE_MEM=$(stress_quiesced_memory "$BATS_TEST_TMPDIR/drains")
}

@test "thread churn at hz=1000 with readers of every file and two drainers" {
	local d=$BATS_TEST_TMPDIR dur out
	dur=$(stress_dur churn)
	load_for_stress hz=1000 key=tid,wobj
	workload_start -n 2 sleep mutex pipe poll
	stress_mem_watch_start "$d/mempeak"
	echo 1 > $PARAM/enabled
	stress_readers_start "$d" 1 2
	run -0 timeout $((dur + 120)) "$(stress_bin offs-churn)" -d "$dur" -t 4 -b 16 -p 2 -z 1 -x 4
	out=$output
	echo "$out"
	stress_readers_stop
	stress_mem_watch_stop
	workload_stop
	result churn seconds "$(awk '$1 == "seconds" { print $2 }' <<< "$out")"
	result churn threads_created "$(awk '$1 == "threads" { print $2 + 0 }' <<< "$out")"
	result churn threads_per_sec "$(awk '$1 == "threads_per_sec" { print $2 }' <<< "$out")"
	result churn procs_per_sec "$(awk '$1 == "procs_per_sec" { print $2 }' <<< "$out")"
	result churn execs "$(awk '$1 == "execs" { print $2 }' <<< "$out")"
	result churn zombie_leader_procs "$(awk '$1 == "zombie_procs" { print $2 }' <<< "$out")"
	result churn reads "$(stress_reads "$d")"
	result churn ticks "$(stat_get ticks)"
	result churn ticks_overrun "$(stat_get ticks_overrun)"
	result churn exiting_seen "$(stat_get exiting)"
	result churn dropped "$(stat_get dropped)"
	stress_check_drains "$d" churn
	STRESS_MEM_PEAK=$(cat "$d/mempeak")
	stress_check_memory churn "$BASE_MEM"
	stress_dmesg_clean
}

@test "readers of every file in loops, two drainers, while the workload waits" {
	local d=$BATS_TEST_TMPDIR dur
	dur=$(stress_dur readers)
	load_for_stress hz=200 key=pid,tid,tname,wobj
	workload_start -n 4 sleep mutex pipe poll epoll wait spin switch
	echo 1 > $PARAM/enabled
	stress_readers_start "$d" 2 2
	sleep "$dur"
	stress_readers_stop
	workload_stop
	result readers seconds "$dur"
	result readers reads "$(stress_reads "$d")"
	result readers ticks "$(stat_get ticks)"
	stress_check_drains "$d" readers
	stress_check_memory readers "$BASE_MEM"
	stress_dmesg_clean
}

# One random valid change of one parameter.
random_param() {
	local keys=(comm pid tid tname wobj pid,tid tid,wobj pid,tname,wobj comm,wobj)
	case $((RANDOM % 9)) in
	0) echo $((1 + RANDOM % 1000)) > $PARAM/hz ;;
	1) echo $((16 + RANDOM % 4096)) > $PARAM/max_stacks ;;
	2) echo $((1 + RANDOM % 128)) > $PARAM/max_depth ;;
	3) echo $((RANDOM % 2)) > $PARAM/enabled ;;
	4) echo $((RANDOM % 2)) > $PARAM/user_stacks ;;
	5) echo $((1 + RANDOM % 128)) > $PARAM/max_user_depth ;;
	6) echo "${keys[RANDOM % ${#keys[@]}]}" > $PARAM/key ;;
	7) echo $(( (RANDOM % 3) * (RANDOM % 300) )) > $PARAM/thread_cache ;;
	8) echo $((RANDOM % 2)) > $PARAM/kthreads ;;
	esac
}

@test "parameters changed at random while sampling, churning and reading" {
	local d=$BATS_TEST_TMPDIR dur n=0 end
	dur=$(stress_dur params)
	load_for_stress hz=500
	workload_start -n 2 sleep mutex pipe poll
	echo 1 > $PARAM/enabled
	stress_readers_start "$d" 1 2
	"$(stress_bin offs-churn)" -d "$dur" -t 2 -b 8 -p 1 -z 1 > "$d/churn" 3>&- &
	CHURN_PID=$!
	end=$((SECONDS + dur))
	while [ $SECONDS -lt $end ]; do
		random_param
		n=$((n + 1))
	done
	wait "$CHURN_PID"; CHURN_PID=
	stress_readers_stop
	workload_stop
	echo 8192 > $PARAM/max_stacks
	echo 65536 > $PARAM/thread_cache
	result params changes "$n"
	result params changes_per_sec $((n / dur))
	result params reads "$(stress_reads "$d")"
	result params ticks "$(stat_get ticks)"
	stress_check_drains "$d" params
	stress_check_memory params "$BASE_MEM"
	stress_dmesg_clean
}

@test "load/unload cycles with readers active and the sampler busy" {
	local d=$BATS_TEST_TMPDIR cycles i rc dying0 dying1 writers
	cycles=$(stress_dur cycles)
	mkdir -p /sys/fs/cgroup/offs-stress
	dying0=$(cgroups_dying)
	"$(stress_bin offs-churn)" -d 100000 -t 2 -b 8 -p 1 -z 0 > /dev/null 3>&- &
	CHURN_PID=$!
	for i in $(seq 1 "$cycles"); do
		offs_load hz=1000 user_stacks=1 key=tid,wobj
		stress_readers_start "$d/c$i" 1 1
		# Parameter writers racing with rmmod, the cgroup one included;
		# they stop with the readers (stress_readers_stop).
		( set +e; while [ ! -e "$READERS_STOP" ]; do echo reset > $P/control; echo $((1 + RANDOM % 1000)) > $PARAM/hz
		    echo 0 > $PARAM/enabled; echo 1 > $PARAM/enabled
		    echo /offs-stress > $PARAM/cgroup; echo > $PARAM/cgroup
		  done ) >/dev/null 2>&1 3>&- &
		READERS+=($!)
		sleep 0.$((3 + RANDOM % 5))
		rc=0
		timeout 60 rmmod offsample || rc=$?
		stress_readers_stop
		[ "$rc" = 0 ] || { echo "rmmod failed in cycle $i: $rc"; return 1; }
		[ ! -e /proc/offsample ] && [ ! -d /sys/module/offsample ]
	done
	kill "$CHURN_PID"; wait "$CHURN_PID" 2>/dev/null || true; CHURN_PID=
	result cycles load_unload "$cycles"
	result cycles reads "$(cat "$d"/c*/reads.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')"
	# A cgroup reference the module forgot would keep the cgroup dying.
	rmdir /sys/fs/cgroup/offs-stress
	dying1=$(cgroups_dying_settle "$dying0")
	result cycles cgroups_left_dying $((dying1 - dying0))
	assert_equal "$dying1" "$dying0"
	stress_dmesg_clean
}

# Once (make test): what a full table drops and how drains stay consistent
# is the table's own logic, the same on every kernel.
# bats test_tags=once-1
@test "a table far too small: drops counted, output still consistent" {
	local d=$BATS_TEST_TMPDIR dur f
	dur=$(stress_dur tiny)
	load_for_stress hz=1000 max_stacks=16 key=pid,tid,tname,wobj
	workload_start -n 4 sleep mutex pipe poll epoll
	echo 1 > $PARAM/enabled
	stress_readers_start "$d" 1 2
	timeout $((dur + 60)) "$(stress_bin offs-churn)" -d "$dur" -t 2 -b 8 -p 1 -z 1 > /dev/null
	stress_readers_stop
	workload_stop
	result tiny seconds "$dur"
	result tiny samples "$(stat_get samples)"
	result tiny dropped "$(stat_get dropped)"
	result tiny dropped_table_full "$(stat_get dropped_table_full)"
	result tiny user_dropped "$(stat_get user_dropped)"
	result tiny wobj_dropped "$(stat_get wobj_dropped)"
	[ "$(stat_get dropped_table_full)" -gt 0 ]
	[ "$(stat_get stacks_unique)" -le 16 ]
	[ "$(stat_get table_fill_pct)" -le 100 ]
	stress_check_drains "$d" tiny
	# Every drain respected the bound; each one's drops add up by reason.
	run -0 awk '$4 > 16 || $5 > 16' "$d/drains"
	assert_output ""
	for f in "$d/rest"; do
		[ "$(hdr_get records "$f")" -le 16 ]
		assert_equal "$(grep -vc '^#' "$f")" "$(hdr_get records "$f")"
	done
	stress_check_memory tiny "$BASE_MEM"
	stress_dmesg_clean
}

# Fault injection aimed at the sampler kthread's own allocations, on a
# kernel with CONFIG_FAILSLAB/CONFIG_FAIL_PAGE_ALLOC (the debug kernel).
fault_injection_start() {
	local dbg=/sys/kernel/debug pid text f
	mountpoint -q $dbg || mount -t debugfs none $dbg 2>/dev/null || return 1
	[ -d $dbg/failslab ] || return 1
	pid=$(pgrep -x offsample | head -n1)
	[ -n "$pid" ] || return 1
	text=$(cat /sys/module/offsample/sections/.text)
	for f in failslab fail_page_alloc; do
		[ -d $dbg/$f ] || continue
		echo Y > $dbg/$f/task-filter
		echo 0 > $dbg/$f/verbose
		echo N > $dbg/$f/ignore-gfp-wait 2>/dev/null || true
		echo 20 > $dbg/$f/probability
		echo 1 > $dbg/$f/interval
		echo -1 > $dbg/$f/times
		[ -e $dbg/$f/min-order ] && echo 0 > $dbg/$f/min-order
		if [ -e $dbg/$f/require-start ]; then
			echo "$text" > $dbg/$f/require-start
			printf '0x%x\n' $((text + 0x100000)) > $dbg/$f/require-end
			echo 32 > $dbg/$f/stacktrace-depth
		fi
	done
	echo 1 > /proc/$pid/make-it-fail
	FAULT_PID=$pid
}

fault_injection_stop() {
	local dbg=/sys/kernel/debug f
	for f in failslab fail_page_alloc; do
		[ -d $dbg/$f ] && echo 0 > $dbg/$f/probability
	done
	[ -n "${FAULT_PID:-}" ] && echo 0 > /proc/$FAULT_PID/make-it-fail 2>/dev/null
	FAULT_PID=
}

@test "memory pressure: allocation failures counted, no crash" {
	local d=$BATS_TEST_TMPDIR dur out fi=no
	dur=$(stress_dur mem)
	load_for_stress hz=1000 key=tid,wobj
	workload_start -n 2 sleep mutex pipe poll
	echo 1 > $PARAM/enabled
	if fault_injection_start; then fi=yes; fi
	stress_readers_start "$d" 1 2
	"$(stress_bin offs-churn)" -d "$dur" -t 2 -b 8 -p 1 -z 1 > /dev/null 3>&- &
	CHURN_PID=$!
	run -0 timeout $((dur + 60)) "$(stress_bin offs-memhog)" -d "$dur" -l 48
	out=$output
	wait "$CHURN_PID" || true; CHURN_PID=
	fault_injection_stop
	stress_readers_stop
	workload_stop
	echo "$out"
	result mem fault_injection "$fi"
	result mem hog_peak_mb "$(awk '$1 == "peak_mb" { print $2 }' <<< "$out")"
	result mem min_available_mb "$(awk '$1 == "min_available_mb" { print $2 }' <<< "$out")"
	result mem dropped_nomem "$(stat_get dropped_nomem)"
	result mem user_dropped "$(stat_get user_dropped)"
	result mem wobj_dropped "$(stat_get wobj_dropped)"
	if [ $fi = yes ]; then
		[ $(( $(stat_get dropped_nomem) + $(stat_get user_dropped) + $(stat_get wobj_dropped) )) -gt 0 ]
	fi
	stress_check_drains "$d" mem
	stress_check_memory mem "$BASE_MEM"
	stress_dmesg_clean
}
