#!/usr/bin/env bats
# Access control and namespaces (docs/SECURITY.md): reading needs
# CAP_SYS_ADMIN in the initial user namespace, as /proc/PID/stack does;
# uid 0 without it (no capabilities, or root of a user namespace) gets
# nothing.  group= readers get a reduced view without user addresses and
# can neither drain nor write control.  Pids follow the pid namespace of
# the /proc mount, cgroup paths the reader's cgroup namespace.
#
# Kernels: every test kernel: capabilities, user, pid and cgroup namespaces
# are the kernel's, and their interfaces moved between 6.1 and 6.12.

load lib

SAFETY=$TOP/build/offsample-safety

teardown() {
	workload_stop
	[ -z "${AN_PID:-}" ] || { kill "$AN_PID" 2>/dev/null; wait "$AN_PID" 2>/dev/null || true; }
	AN_PID=
	pkill -f 'sleep 100[23]' || true
}

teardown_file() {
	load lib
	offs_unload
	rmdir /sys/fs/cgroup/osw-cgns 2>/dev/null || true
}

# nocaps CMD...: CMD as uid 0 with every capability dropped.
nocaps() {
	setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all "$@"
}

# Every reading file refuses with EACCES, control with EPERM, parameter
# writes with EPERM, and nothing changes: run as "$@".
assert_refused() {
	local f g0 hz0
	g0=$(stat_get generation)
	hz0=$(cat $PARAM/hz)
	for f in stacks drain threads stats; do
		run "$@" cat $P/$f
		assert_failure
		assert_output --partial "Permission denied"
		refute_output --partial "# offsample"
	done
	run "$@" bash -c "echo reset > $P/control"
	assert_failure
	assert_output --partial "Operation not permitted"
	run "$@" bash -c "echo 5 > $PARAM/hz"
	assert_failure
	assert_output --partial "Operation not permitted"
	assert_equal "$(cat $PARAM/hz)" "$hz0"
	# A refused drain or reset ends no generation.
	assert_equal "$(stat_get generation)" "$g0"
	[ "$(stat_get open_denied)" -gt 0 ]
}

@test "uid 0 without CAP_SYS_ADMIN gets nothing (EACCES; EPERM to write)" {
	offs_load hz=19
	sleep 0.5
	# Sanity: the same command with capabilities reads.
	run -0 setpriv --inh-caps=+sys_admin cat $P/stacks
	assert_line --index 0 "# offsample stacks v5"
	run -0 nocaps grep -E '^Cap(Eff|Prm):' /proc/self/status
	assert_line --regexp '^CapEff:[[:space:]]+0+$' 
	assert_refused nocaps
}

@test "root of a user namespace (mapped to uid 0) gets nothing" {
	offs_load hz=19
	sleep 0.5
	run -0 unshare -U -r id -u
	assert_output 0
	assert_refused unshare -U -r
}

@test "group= member: reduced view without user addresses; no drain, no control" {
	local f=$BATS_TEST_TMPDIR/group a=$BATS_TEST_TMPDIR/admin out=$BATS_TEST_TMPDIR/anon.out
	offs_load hz=19 group=4242 key=wobj
	run -0 stat -c '%n %a %u %g' $P/stacks $P/threads $P/stats $P/drain $P/control
	assert_output "$(printf '%s\n' "$P/stacks 440 0 4242" "$P/threads 440 0 4242" \
		"$P/stats 440 0 4242" "$P/drain 400 0 0" "$P/control 200 0 0")"
	workload_start -n 2 mutex
	"$SAFETY" anon > "$out" 2>&1 3>&- &
	AN_PID=$!
	wait_line "$out" '^ready' 300 "$AN_PID" > /dev/null
	sleep 1.5
	# Paused: both reads see the same generation.
	echo 0 > $PARAM/enabled
	setpriv --reuid=65534 --regid=65534 --groups=4242 cat $P/stacks > "$f"
	cat $P/stacks > "$a"
	echo 1 > $PARAM/enabled
	# Root sees the futex address and the anonymous code's address ...
	assert_equal "$(hdr_get view "$a")" full
	grep -q $'\tfutex(0x[0-9a-f]*)\t' "$a"
	grep -qE $'\t\\[anon\\]\\+0x[0-9a-f]{9,}' "$a"
	# ... the group member the same records without them.
	assert_equal "$(hdr_get view "$f")" group
	assert_equal "$(grep -vc '^#' "$f")" "$(grep -vc '^#' "$a")"
	assert_equal "$(sum_counts "$f")" "$(sum_counts "$a")"
	grep -q $'\tfutex(hidden)\t' "$f"
	grep -qE $'\t\\[anon\\][;\t]' "$f"
	run grep -E '0x[0-9a-f]{9,}' "$f"
	assert_failure
	# File offsets (which reveal no layout) stay.
	grep -qE $'\t/[^\t]*\\+0x[0-9a-f]+' "$f"
	run -0 setpriv --reuid=65534 --regid=65534 --groups=4242 cat $P/threads $P/stats
	# Drain and control are root's: a drain by a member would take the
	# samples away from the root cron job.
	g0=$(stat_get generation)
	run setpriv --reuid=65534 --regid=65534 --groups=4242 cat $P/drain
	assert_failure
	assert_output --partial "Permission denied"
	run setpriv --reuid=65534 --regid=4242 --clear-groups bash -c "echo reset > $P/control"
	assert_failure
	assert_equal "$(stat_get generation)" "$g0"
	# Another group: nothing.
	run setpriv --reuid=65534 --regid=4243 --clear-groups cat $P/stats
	assert_failure
}

@test "group= member through a /proc of its own pid namespace (a container's): nothing" {
	# Joining the group takes only CAP_SETGID, which container root
	# usually has; the group view is for readers of the host's /proc.
	offs_load hz=19 group=4242
	sleep 0.5
	run -0 setpriv --reuid=65534 --regid=65534 --groups=4242 cat $P/stats
	local d0 f
	d0=$(stat_get open_denied)
	for f in stacks threads stats; do
		run unshare --pid --fork --mount-proc setpriv --reuid=65534 \
			--regid=65534 --groups=4242 cat /proc/offsample/$f
		assert_failure
		assert_output --partial "Permission denied"
		refute_output --partial "# offsample"
	done
	[ "$(stat_get open_denied)" -ge $((d0 + 3)) ]
	# Nor in a pid namespace of its own through the host's /proc (as a
	# container that bind-mounts it).
	run unshare --pid --fork setpriv --reuid=65534 --regid=65534 \
		--groups=4242 cat /proc/offsample/stats
	assert_failure
	assert_output --partial "Permission denied"
	# Root (CAP_SYS_ADMIN) reads through it, its pids translated (test below).
	run -0 unshare --pid --fork --mount-proc cat /proc/offsample/stats
}

@test "parameters while the module loads and unloads: a writer without CAP_SYS_ADMIN never gets in" {
	# The parameter files exist before the module's init runs and after
	# its exit: a write in those windows used to be taken unchecked.
	local stop=$BATS_TEST_TMPDIR/stop i bad=0
	offs_unload
	nocaps perl -e '
		my ($stop, @f) = @ARGV;
		until (-e $stop) {
			for my $f (@f) {
				open(my $h, ">", $f) or next;
				syswrite($h, $f =~ /hz$/ ? "7" : "0");
				close($h);
			}
		}' "$stop" $PARAM/enabled $PARAM/hz &
	AN_PID=$!
	# 0.5.5 let the writer in at 24 of 25 loads (6.1 guest).
	for i in $(seq 1 10); do
		insmod "$OFFS_KO" hz=19
		[ "$(cat $PARAM/enabled) $(cat $PARAM/hz)" = "Y 19" ] || { echo "load $i: $(cat $PARAM/enabled) $(cat $PARAM/hz)"; bad=$((bad + 1)); }
		rmmod offsample
	done
	touch "$stop"
	wait "$AN_PID" || true
	AN_PID=
	assert_equal "$bad" 0
}

@test "pid namespace: threads lists only its threads, stacks show its pids or -" {
	local f=$BATS_TEST_TMPDIR/ns
	offs_load hz=19 key=pid,tid
	sleep 1002 &
	host_sleep=$!
	# Inside: a shell (pid 1 there) with a sleeper of its own.
	unshare --pid --fork --mount-proc bash -c '
		sleep 1003 & s=$!
		sleep 1.5
		echo "sleeper $s"
		cat /proc/offsample/threads
		echo "== stacks"
		cat /proc/offsample/stacks
		kill $s' > "$f"
	# threads: the namespace's processes only, with its own ids.
	sed -n '/^  PID/,/^== stacks/p' "$f" | grep -v '^== stacks' > "$f.threads"
	run -0 awk 'NR > 1 { print $1, $2, $3 }' "$f.threads"
	assert_line "1 1 bash"
	ns_sleep=$(awk '/^sleeper/ { print $2 }' "$f")
	assert_line "$ns_sleep $ns_sleep sleep"
	refute_output --partial "virtme"
	refute_output --regexp '^[0-9]+ [0-9]+ (kthreadd|ksoftirqd)'
	[ "$(wc -l < "$f.threads")" -le 6 ]
	# stacks: the same records for everyone; pids as seen from inside,
	# "-" for processes the namespace cannot see.
	sed -n '/^== stacks/,$p' "$f" | sed 1d > "$f.stacks"
	run -0 awk -F'\t' '!/^#/ && $6 == "sleep" { print $4, $5 }' "$f.stacks"
	assert_line "$ns_sleep $ns_sleep"
	assert_line "- -"
	# The host's init (pid 1 outside) is not pid 1 inside.
	run -0 awk -F'\t' '!/^#/ && $4 == 1 { print $6 }' "$f.stacks"
	refute_output --partial virtme
	kill "$host_sleep"
}

@test "pid namespace: the child wait4() waits for, as each reader's namespace numbers it" {
	local f=$BATS_TEST_TMPDIR/w host_pid ns_pid ns_w bg
	offs_load hz=19 key=pid,wobj
	# Inside: perl forks a sleeper and waits for it (wait4, system call
	# 61); the host reads while it does, then lets it end.
	F=$f unshare --pid --fork --mount-proc bash -c '
		perl -e "\$| = 1; my \$p = fork // die; exec qw(sleep 1003) unless \$p; print \"\$p\n\"; waitpid(\$p, 0)" > "$F.child" &
		w=$!
		SECONDS=0
		until [ "$(cut -d" " -f1 /proc/$w/syscall 2>/dev/null)" = 61 ] || [ $SECONDS -gt 60 ]; do
			sleep 0.1
		done
		sleep 0.5
		echo "sleeper $(cat "$F.child") waiter $w"
		cat /proc/offsample/stacks
		touch "$F.ready"
		until [ -e "$F.done" ] || [ $SECONDS -gt 120 ]; do sleep 0.1; done
		kill "$(cat "$F.child")"; wait' > "$f.ns" &
	bg=$!
	SECONDS=0
	until [ -e "$f.ready" ] || [ $SECONDS -gt 90 ]; do sleep 0.1; done
	host_pid=$(pgrep -f '^sleep 1003$')
	cat $P/stacks > "$f.host"
	touch "$f.done"
	wait "$bg"
	ns_pid=$(awk '/^sleeper/ { print $2 }' "$f.ns")
	ns_w=$(awk '/^sleeper/ { print $4 }' "$f.ns")
	echo "sleeper: $ns_pid inside, $host_pid outside; waiter $ns_w inside"
	[ -n "$host_pid" ]
	[ "$ns_pid" != "$host_pid" ]
	# Off-CPU records only: an on-CPU sample taken while perl ran in the
	# kernel on its way into (or out of) wait4() names the call alone,
	# "wait4", as a running thread waits for nothing (docs/FORMAT.md).
	run -0 awk -F'\t' -v w="$ns_w" '!/^#/ && $2 != "cpu" && $4 == w && $10 ~ /^wait4/ && !seen[$10]++ { print $10 }' "$f.ns"
	assert_output "wait4(pid $ns_pid)"
	run -0 awk -F'\t' '!/^#/ && $2 != "cpu" && $6 == "perl" && $10 ~ /^wait4/ && !seen[$10]++ { print $10 }' "$f.host"
	assert_output "wait4(pid $host_pid)"
}

@test "cgroup namespace: paths are relative to the reader's cgroup namespace" {
	local f=$BATS_TEST_TMPDIR/cg
	offs_load hz=19 key=pid
	mkdir -p /sys/fs/cgroup/osw-cgns
	bash -c 'echo $$ > /sys/fs/cgroup/osw-cgns/cgroup.procs; exec sleep 1002' &
	inner=$!
	sleep 1.5
	cat $P/stacks > "$f.host"
	bash -c 'echo $$ > /sys/fs/cgroup/osw-cgns/cgroup.procs; exec unshare --cgroup cat /proc/offsample/stacks' > "$f.ns"
	kill "$inner"
	# From the host: the full path; from inside: "/" for its own cgroup,
	# and no name for the root outside it (the kernel does not resolve
	# a cgroup id outside the reader's namespace): its id only.
	# A process may have several stacks (sleep starting up, then in
	# nanosleep): each distinct cgroup field is printed once.
	run -0 awk -F'\t' -v p="$inner" '!/^#/ && $4 == p && $6 == "sleep" && !seen[$11]++ { print $11 }' "$f.host"
	assert_output /osw-cgns
	run -0 awk -F'\t' -v p="$inner" '!/^#/ && $4 == p && $6 == "sleep" && !seen[$11]++ { print $11 }' "$f.ns"
	assert_output /
	run -0 awk -F'\t' '!/^#/ && $4 == 1 && !seen[$11]++ { print $11 }' "$f.ns"
	assert_output "cgroup-id:$(stat -c %i /sys/fs/cgroup)"
	run -0 awk -F'\t' '!/^#/ && $4 == 1 && !seen[$11]++ { print $11 }' "$f.host"
	assert_output /
}

@test "threads: unwinding on demand is rate-limited for all readers together" {
	local n0 n1 t0 t1
	offs_load hz=9
	n0=$(cat $P/threads | wc -l)
	echo 50 > $PARAM/threads_rate
	t0=$(stat_get threads_throttled)
	SECONDS=0
	n1=$(cat $P/threads | wc -l)
	t1=$(stat_get threads_throttled)
	echo "threads $n0/$n1 lines, throttled $((t1 - t0)) times, $SECONDS s"
	# Everything is still there, only slower: past a burst of 50, at
	# most 50 threads a second.
	[ "$n1" -ge $((n0 * 9 / 10)) ]
	[ "$((t1 - t0))" -gt 0 ]
	[ "$SECONDS" -ge $(( (n1 - 50) / 50 - 1 )) ]
	# A fatal signal ends a throttled read at once (at 1 thread a second
	# it would take minutes).
	echo 1 > $PARAM/threads_rate
	SECONDS=0
	run timeout -s KILL 2 cat $P/threads
	assert_failure 137
	[ "$SECONDS" -le 6 ]
	echo 20000 > $PARAM/threads_rate
}
