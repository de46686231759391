#!/usr/bin/env bats
# The thread cache (module/threadcache.c): threads that did not run are counted
# again without unwinding, and nothing stale ever comes out of it.
#
# Kernels: every test kernel: the cache's validity rests on each kernel's
# task lifetimes and scheduler statistics.
# Tests tagged once-1 or once-2 test only the module's own logic and run
# in one guest of make test (tests/guest/run.sh, OFFS_ONCE).

load lib

teardown() {
	workload_stop
	pkill -f 'sleep 100[01]' || true
	if [ -f "$BATS_TEST_TMPDIR/pids" ]; then kill $(cat "$BATS_TEST_TMPDIR/pids") 2>/dev/null || true; fi
	if [ -f "$BATS_TEST_TMPDIR/preempt" ]; then cat "$BATS_TEST_TMPDIR/preempt" > /sys/kernel/debug/sched/preempt; fi
	if [ -f "$BATS_TEST_TMPDIR/rt_runtime" ]; then cat "$BATS_TEST_TMPDIR/rt_runtime" > /proc/sys/kernel/sched_rt_runtime_us; fi
}

teardown_file() {
	load lib
	offs_unload
}

# Records of one thread (key includes tid) in a stacks file: "reason kstack".
thread_records() {
	awk -F'\t' -v t="$2" '!/^#/ && $5 == t { print $2, $8 }' "$1"
}

@test "unchanged threads are counted from the cache, with the same counts" {
	offs_load hz=19
	workload_start -n 3 sleep
	sleep 1
	cat $P/drain > /dev/null
	h0=$(stat_get cache_hits)
	sleep 3
	f=$BATS_TEST_TMPDIR/d
	cat $P/drain > "$f"
	h1=$(stat_get cache_hits)
	ticks=$(hdr_get ticks "$f")
	echo "hits $h0 -> $h1, ticks $ticks"
	# Every sleeping workload thread was a hit on (nearly) every tick.
	[ $((h1 - h0)) -ge $((ticks * 4 * 9 / 10)) ]
	assert_equal "$(sum_counts "$f" '$6 == "osw-sleep"')" $((ticks * 4))
	# Counted in the tick's walk itself, without a visit (sampler.c).
	[ "$(stat_get cache_hits_walk)" -ge $((ticks * 4 * 9 / 10)) ]
	[ "$(stat_get thread_ns_walk)" -gt 0 ]
	[ "$(stat_get thread_ns_full)" -gt 0 ]
	[ "$(stat_get cache_entries)" -gt 0 ]
	# A full capture's parts (0.5.2): each counted, none more than the
	# whole they are part of.
	# One reading of the stats: the sampler goes on meanwhile.
	local full enter pin kst uw us st=$BATS_TEST_TMPDIR/stats
	cat $P/stats > "$st"
	full=$(stat_get full_ns_total "$st") enter=$(stat_get full_enter_ns "$st")
	pin=$(stat_get full_pin_ns "$st") kst=$(stat_get full_kstack_ns "$st")
	uw=$(stat_get full_uwalk_ns "$st") us=$(stat_get user_ns_total "$st")
	echo "full $full: enter $enter, pinned $pin (kernel unwind $kst, user walk $uw), user stack to files $us"
	[ "$kst" -gt 0 ]
	[ "$uw" -gt 0 ]
	[ "$enter" -gt 0 ]
	[ "$us" -gt 0 ]
	[ $((kst + uw)) -le "$pin" ]
	[ $((enter + pin + us)) -le "$full" ]
	# 0.5.5: one full capture in 8 is timed (every 8th from a random
	# start each tick) and counts for 8: a tick's count is within one of
	# an eighth of its captures (and the sampler may be between the two
	# counters: one more).
	local timed misses nt
	timed=$(stat_get full_timed "$st") misses=$(stat_get cache_misses "$st") nt=$(stat_get ticks "$st")
	echo "full captures $misses in $nt ticks, timed $timed"
	[ "$timed" -gt 0 ]
	[ $((timed * 8)) -ge $((misses - 8 * (nt + 1))) ]
	[ $((timed * 8)) -le $((misses + 8 * (nt + 1))) ]
}

@test "a thread that runs and blocks somewhere else gets its new stack on the next tick" {
	offs_load hz=19 key=tid
	workload_start -n 1 switch
	sleep 1
	tid=$(ps -eLo tid=,comm= | awk '$2 == "osw-switch-0" { print $1 }')
	[ -n "$tid" ]
	cat $P/drain > "$BATS_TEST_TMPDIR/before"
	run -0 thread_records "$BATS_TEST_TMPDIR/before" "$tid"
	assert_line --regexp '^ipc .*pipe_read'
	kill -USR1 "$(pgrep -x osw-switch)"
	sleep 0.5			# about ten ticks
	cat $P/drain > /dev/null	# the window with the move in it
	sleep 1
	cat $P/drain > "$BATS_TEST_TMPDIR/after"
	run -0 thread_records "$BATS_TEST_TMPDIR/after" "$tid"
	assert_output --regexp '^sleep .*do_nanosleep'
	refute_output --partial pipe_read
	n=$(thread_records "$BATS_TEST_TMPDIR/after" "$tid" | wc -l)
	assert_equal "$n" 1
}

@test "a pid reused by a new thread never inherits an old stack" {
	local old new helper out=$BATS_TEST_TMPDIR/withpid
	# hz=1: the old thread's exit and the new one's start fall between two
	# ticks, so the next tick finds a cache entry with the same tid.
	offs_load hz=1 key=pid,tid
	sleep 1000 | cat > /dev/null &
	old=$!			# the last command of the pipeline: cat
	sleep 3.5		# ticks: captured, then counted from the cache
	[ "$(stat_get cache_hits)" -gt 0 ]
	cat $P/drain > "$BATS_TEST_TMPDIR/old"
	run -0 thread_records "$BATS_TEST_TMPDIR/old" "$old"
	assert_line --regexp '^ipc .*pipe_read'
	kill "$old"
	pkill -f 'sleep 1000' || true
	wait "$old" || true	# not a bare wait: the bats timeout watchdog is a child too
	cat $P/drain > /dev/null	# close the window while the old one ran
	# A new process gets the old pid: clone3 with set_tid (the helper waits
	# for it; ns_last_pid would need CONFIG_CHECKPOINT_RESTORE).
	"$OFFS_WITHPID" "$old" sleep 1001 > "$out" 3>&- &
	helper=$!
	new=$(wait_line "$out" '^pid [0-9]+$' 100 "$helper" | awk '{ print $2 }')
	assert_equal "$new" "$old"
	sleep 3.2
	cat $P/drain > "$BATS_TEST_TMPDIR/new"
	kill "$new"
	wait "$helper" || true
	run -0 thread_records "$BATS_TEST_TMPDIR/new" "$new"
	assert_line --regexp '^sleep .*do_nanosleep'
	refute_output --partial pipe_read
	# Nothing under that pid but the new process (or the helper's copy
	# before exec).
	run -0 awk -F'\t' -v p="$new" '!/^#/ && $5 == p && $6 != "sleep" && $6 != "offsample-withp" { bad++ } END { exit bad > 0 }' "$BATS_TEST_TMPDIR/new"
}

# Once (make test): the cache's parameter, the module's own.
# bats test_tags=once-2
@test "thread_cache=0 disables the cache and gives the same counts" {
	offs_load hz=19 thread_cache=0
	workload_start -n 3 sleep pipe
	sleep 1
	cat $P/drain > /dev/null
	sleep 2
	f=$BATS_TEST_TMPDIR/d
	cat $P/drain > "$f"
	assert_equal "$(stat_get cache_hits)" 0
	assert_equal "$(stat_get cache_entries)" 0
	ticks=$(hdr_get ticks "$f")
	assert_equal "$(sum_counts "$f" '$6 == "osw-sleep"')" $((ticks * 4))
	assert_equal "$(sum_counts "$f" '$6 == "osw-pipe" && $2 == "ipc"')" $((ticks * 3))
}

# Once (make test): the cache's bound, the module's own.
# bats test_tags=once-1
@test "thread_cache lowered: the entries beyond it go at the next tick" {
	local e1 e2
	offs_load hz=19
	workload_start -n 100 sleep
	sleep 1.5
	e1=$(stat_get cache_entries)
	echo 40 > $PARAM/thread_cache
	sleep 1
	e2=$(stat_get cache_entries)
	echo "entries $e1 -> $e2 (thread_cache 40)"
	[ "$e1" -ge 100 ]
	[ "$e2" -le 40 ]
	[ "$e2" -ge 1 ]
	[ "$(stat_get cache_full)" -gt 0 ]
}

@test "exited threads leave the cache" {
	offs_load hz=19
	workload_start -n 50 sleep
	sleep 1
	e1=$(stat_get cache_entries)
	workload_stop
	sleep 1
	e2=$(stat_get cache_entries)
	echo "entries $e1 -> $e2"
	[ $((e1 - e2)) -ge 50 ]
}

@test "a walk that lets the scheduler in counts every thread once per tick" {
	local n=1000 pre=/sys/kernel/debug/sched/preempt mode= c f ticks breaks cut rt
	# A kernel that preempts kernel code (full, PREEMPT_RT) takes the CPU
	# from the walk by itself; the walk yields on the others (none,
	# voluntary: Debian's default).  Choose voluntary where the kernel
	# lets us (PREEMPT_DYNAMIC; PREEMPT_RT's file refuses it: EINVAL).
	# Only if it is not voluntary already: a write re-patches every
	# cond_resched() call site, each with IPIs to the other CPU, and in a
	# guest on a loaded host that took 187 s (6.1, host CPU shared four
	# ways) where it takes under a second on an idle one.
	if [ -w "$pre" ]; then
		mode=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' "$pre")
	fi
	if [ -n "$mode" ] && [ "$mode" != voluntary ]; then
		echo "$mode" > "$BATS_TEST_TMPDIR/preempt"
		if ! (echo voluntary > "$pre") 2>/dev/null; then
			echo "preempt: voluntary refused, staying $mode"
			rm "$BATS_TEST_TMPDIR/preempt"
			mode=
		fi
	fi
	offs_load hz=19
	# Two processes of n + 1 sleeping threads (the workload's limit is
	# 1,000 threads per scenario).
	workload_start -n $n sleep
	"$OFFS_WORKLOAD" -n $n sleep > "$BATS_TEST_TMPDIR/wl2.out" 2>&1 3>&- &
	echo $! >> "$BATS_TEST_TMPDIR/pids"
	wait_line "$BATS_TEST_TMPDIR/wl2.out" '^ready$' 600 $! > /dev/null
	# A real-time thread per CPU waking every millisecond: each wakeup
	# asks the CPU running the walk to reschedule.  Under emulation on a
	# busy host each wakeup costs far more (with the host's CPU shared four
	# ways these two took over a fifth of each CPU), and real-time threads
	# may take 95% of it (sched_rt_runtime_us), leaving the rest of the
	# guest to crawl: they get at most a fifth for this test, and still
	# wake every millisecond while they have time left.
	rt=/proc/sys/kernel/sched_rt_runtime_us
	cat "$rt" > "$BATS_TEST_TMPDIR/rt_runtime"
	echo 200000 > "$rt"
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" chrt -f 50 perl -e 'select(undef, undef, undef, 0.001) while 1' &
		echo $! >> "$BATS_TEST_TMPDIR/pids"
	done
	sleep 2
	# Counters read before the first drain and after the second: they
	# cover the drained ticks (and maybe one or two more).
	breaks=$(stat_get walk_breaks)
	cut=$(stat_get walk_cut)
	# A drain waits for the tick in progress: bounded, and if it does not
	# come back, what the sampler and the reader are doing is printed.
	drain_or_say() {
		timeout 120 cat $P/drain > "$1" && return 0
		echo "drain did not return in 120 s; sampler kthread:"
		cat /proc/"$(pgrep -x offsample | head -n1)"/stack
		grep -E '^(ticks|tick_ns_last|walk_breaks|walk_cut) ' $P/stats
		return 1
	}
	drain_or_say /dev/null
	sleep 3
	f=$BATS_TEST_TMPDIR/d
	drain_or_say "$f"
	kill $(cat "$BATS_TEST_TMPDIR/pids")
	rm "$BATS_TEST_TMPDIR/pids"
	ticks=$(hdr_get ticks "$f")
	breaks=$(( $(stat_get walk_breaks) - breaks ))
	cut=$(( $(stat_get walk_cut) - cut ))
	echo "ticks $ticks, walk breaks $breaks, walks cut $cut, preempt: $(cat $pre 2>/dev/null || uname -v)"
	# Every sleeping thread once per tick, none twice after a break.
	c=$(sum_counts "$f" '$6 == "osw-sleep"')
	if [ "$cut" = 0 ]; then
		assert_equal "$c" $((ticks * 2 * (n + 1)))
	else
		# A walk cut short (the thread it paused at exited meanwhile)
		# misses the threads after that point, in that tick only.
		[ "$c" -le $((ticks * 2 * (n + 1))) ]
		[ "$c" -ge $(((ticks - cut) * 2 * (n + 1))) ]
	fi
	# Pauses are seen where the kernel does not preempt the walk: the
	# voluntary mode chosen above, or a kernel built without preemption
	# of kernel code ("PREEMPT" or "PREEMPT_RT" in uname -v says it has).
	if [ -n "$mode" ] || ! uname -v | grep -qE 'PREEMPT( |_RT)'; then
		[ "$breaks" -gt 0 ]
	fi
}

# Each workload thread's most frequent (reason, kernel stack) in a drain,
# as "tid reason kstack" lines, sorted.
kstacks_of() {
	awk -F'\t' '!/^#/ && $6 ~ /^osw/ && $2 != "cpu" {
		k = $5 " " $2 " " $8; n[k] += $1
		if (n[k] > best[$5]) { best[$5] = n[k]; top[$5] = k }
	} END { for (t in top) print top[t] }' "$1" | sort
}

@test "kernel stacks remembered by the stack cache are the unwinder's, frame for frame" {
	# thread_cache=0: every tick captures every thread again, so the
	# kernel stack of each comes from the stack cache or the unwinder.
	offs_load hz=19 key=tid thread_cache=0 kthreads=0
	workload_start -n 2 sleep mutex pipe poll spin
	sleep 1
	cat $P/drain > /dev/null
	local h m h0 f=$BATS_TEST_TMPDIR
	cat $P/stats > "$f/s0"
	sleep 3
	cat $P/drain > "$f/on"
	h=$(stat_delta kstack_cache_hits "$f/s0")
	m=$(stat_delta kstack_cache_misses "$f/s0")
	echo "with the cache: hits $h, misses $m"
	# User threads only (kthreads=0): the waiting ones repeat their
	# stacks from tick to tick; only the spinners (preempted, through
	# an interrupt's registers) and newcomers are unwound.
	[ "$h" -gt 0 ] && [ "$h" -ge $((3 * m)) ]
	[ "$(stat_get kstack_cache_bytes)" -gt 0 ]
	# Two threads of each kind: the second one's user stack comes from
	# the memo of the process's stacks in that tick (0.5.5).
	[ "$(stat_get user_stack_memo_hits)" -gt 0 ]
	# Without it: every stack from the unwinder, the same stacks.
	echo 0 > $PARAM/kstack_cache
	cat $P/drain > /dev/null
	h0=$(stat_get kstack_cache_hits)
	sleep 3
	cat $P/drain > "$f/off"
	assert_equal "$(stat_get kstack_cache_hits)" "$h0"
	# Every waiting workload thread has the same stack with and without
	# the cache (its most frequent one: the spinners are left out).
	kstacks_of "$f/on" | grep -v '^[0-9]* sched ' > "$f/on.k" || true
	kstacks_of "$f/off" | grep -v '^[0-9]* sched ' > "$f/off.k" || true
	cat "$f/on.k"
	[ "$(wc -l < "$f/on.k")" -ge 8 ]
	run -0 diff "$f/on.k" "$f/off.k"
	# A module that goes away (crc7: nothing uses it) makes every
	# remembered stack unwound again: at least one miss for each distinct
	# stack at once.  (The cache's key is the first return address and its
	# place in the stack: where a kernel moves each system call's stack
	# by a random offset, 5.13+, every thread has entries of its own, a
	# tick's worth of misses; 5.10's threads in one stack share one.)
	echo 1 > $PARAM/kstack_cache
	local stacks quiet
	stacks=$(awk '{ print $3 }' "$f/on.k" | sort -u | wc -l)
	sleep 1
	m0=$(stat_get kstack_cache_misses)
	sleep 1
	quiet=$(( $(stat_get kstack_cache_misses) - m0 ))
	modprobe crc7
	m0=$(stat_get kstack_cache_misses)
	modprobe -r crc7
	sleep 1
	m1=$(stat_get kstack_cache_misses)
	echo "$stacks distinct stacks; misses in a second: $quiet, after a module went away: $((m1 - m0))"
	[ "$stacks" -ge 4 ]
	[ $((m1 - m0)) -ge $((quiet + stacks)) ]
}

@test "a thread that waits again where it waited, in a new system call, gets its kernel stack from the stack cache" {
	# Debian's kernels move each system call's kernel stack by a random
	# offset (randomize_kstack_offset, 5.13+): the frames of a thread
	# that naps 3 ms at a time sit at another depth at every tick.  Its
	# stack is served from the cache all the same (0.9.5; before, each
	# new depth was a miss).
	offs_load hz=19 key=tid kthreads=0
	workload_start -n 2 nap
	sleep 1
	cat $P/drain > /dev/null
	local h m u f=$BATS_TEST_TMPDIR
	cat $P/stats > "$f/s0"
	sleep 3
	cat $P/stats > "$f/s1"
	cat $P/drain > "$f/on"
	h=$(stat_delta kstack_cache_hits "$f/s0" "$f/s1")
	m=$(stat_delta kstack_cache_misses "$f/s0" "$f/s1")
	u=$(stat_delta stacks_unwound "$f/s0" "$f/s1")
	echo "randomize_kstack_offset: $(grep -o 'randomize_kstack_offset=[a-z]*' /proc/cmdline || echo default)"
	echo "in 3 s: $u stacks unwound, stack cache hits $h, misses $m"
	# The two nappers ran before nearly every tick: captured in full.
	[ "$u" -ge 57 ]
	# At most one in ten from the unwinder.
	[ "$h" -gt 0 ] && [ "$h" -ge $((9 * m)) ]
	# Their stack is the unwinder's: the same without the cache.
	echo 0 > $PARAM/kstack_cache
	cat $P/drain > /dev/null
	sleep 3
	cat $P/drain > "$f/off"
	kstacks_of "$f/on" > "$f/on.k"
	kstacks_of "$f/off" > "$f/off.k"
	cat "$f/on.k"
	# The two nappers and their process's main thread (a long sleep).
	[ "$(grep -c ' sleep .*do_nanosleep' "$f/on.k")" -eq 3 ]
	run -0 diff "$f/on.k" "$f/off.k"
}
