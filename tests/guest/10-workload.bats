#!/usr/bin/env bats
# Known waits show up with the right reason, state, characteristic kernel
# frames and counts, under the workload's process names.
#
# Counts: a thread that waits the whole time is seen once per tick, so a
# scenario with N threads must have ticks * N samples.  Stated tolerance:
# 98..100% for threads that never run; 80..100% for the O_DIRECT readers
# (they run briefly between 500 ms reads); for run-queue waiters with N
# spinners on C CPUs, (N - C)..N per tick.
#
# Kernels: every test kernel: the reasons come from each kernel's own wait
# sites and stacks.

load lib

N=3
SECS=8

setup_file() {
	load lib
	# Disk I/O that reliably waits: dm-delay adds 500 ms to every read.
	slow_disk_setup osw-slow

	offs_load hz=19
	workload_start -n $N --dio /dev/mapper/osw-slow all
	sleep 1
	cat $P/drain > /dev/null		# start a clean window
	sleep $SECS
	cat $P/drain > "$BATS_FILE_TMPDIR/drain.txt"
	cat $P/threads > "$BATS_FILE_TMPDIR/threads.txt"
	ps -eLo pid=,tid=,comm= > "$BATS_FILE_TMPDIR/ps.txt"
	workload_stop

	# Run-queue wait: more spinning threads than CPUs, on their own.
	workload_start -n 4 spin
	sleep 1
	cat $P/drain > /dev/null
	sleep 4
	cat $P/drain > "$BATS_FILE_TMPDIR/spin.txt"
	workload_stop
	cp "$BATS_FILE_TMPDIR"/drain.txt "$ARTIFACTS/workload-drain-$KREL.txt"
	cp "$BATS_FILE_TMPDIR"/threads.txt "$ARTIFACTS/workload-threads-$KREL.txt"
	cp "$BATS_FILE_TMPDIR"/spin.txt "$ARTIFACTS/workload-spin-$KREL.txt"
}

teardown_file() {
	load lib
	workload_stop
	offs_unload
	slow_disk_teardown osw-slow
}

D() { echo "$BATS_FILE_TMPDIR/drain.txt"; }

# check_scenario COMM REASON STATE FRAME_REGEX MIN_PCT
check_scenario() {
	local comm=$1 reason=$2 state=$3 frames=$4 min_pct=$5 file=${6:-$(D)}
	local ticks n got want
	ticks=$(hdr_get ticks "$file")
	n=${NTHREADS:-$N}
	want=$((ticks * n))
	got=$(sum_counts "$file" "\$6 == \"$comm\" && \$2 == \"$reason\"")
	echo "comm=$comm reason=$reason ticks=$ticks threads=$n want=$want got=$got"
	[ "$ticks" -gt 0 ]
	[ "$got" -le "$want" ]
	[ "$((got * 100))" -ge "$((want * min_pct))" ]
	# Every such sample has the expected state and frames.
	run -0 awk -F'\t' -v c="$comm" -v r="$reason" -v s="$state" -v f="$frames" \
		'!/^#/ && $6 == c && $2 == r { n++; if ($3 != s || $8 !~ f) { print "bad: " $0; bad++ } }
		 END { if (!n || bad) exit 1 }' "$file"
}

@test "drain header: format, ticks at hz, samples equal the sum of counts" {
	f=$(D)
	run -0 head -n1 "$f"
	assert_output "# offsample stacks v5"
	assert_equal "$(hdr_get source "$f")" drain
	assert_equal "$(hdr_get hz "$f")" 19
	assert_equal "$(hdr_get samples "$f")" "$(sum_counts "$f")"
	assert_equal "$(hdr_get dropped "$f")" 0
	# The sampler ticks at hz: 50..105% of hz * duration (software emulation
	# can delay a tick, never add one).
	ticks=$(hdr_get ticks "$f"); dur=$(hdr_get duration "$f")
	run -0 awk -v t="$ticks" -v d="$dur" 'BEGIN { e = 19 * d; print t, e; exit !(t >= 0.5 * e && t <= 1.05 * e + 1) }'
}

@test "nanosleep: sleep, S, do_nanosleep" {
	NTHREADS=$((N + 1)) check_scenario osw-sleep sleep S 'do_nanosleep.*hrtimer_nanosleep' 98
}

@test "contended pthread mutex: lock, S, futex wait" {
	check_scenario osw-mutex lock S 'futex_wait_queue|futex_wait_queue_me|__futex_wait|futex_do_wait' 98
	# The holder sleeps: one thread, reason sleep.
	NTHREADS=1 check_scenario osw-mutex sleep S do_nanosleep 98
}

@test "pipe read: ipc, S, pipe_read" {
	check_scenario osw-pipe ipc S '(^|;)(anon_)?pipe_read' 98
}

@test "poll on an idle socket: net, S, do_sys_poll" {
	check_scenario osw-poll net S 'do_sys_poll|do_poll' 98
}

@test "epoll_wait on an idle socket: net, S, do_epoll_wait" {
	check_scenario osw-epoll net S 'do_epoll_wait|ep_poll' 98
}

@test "accept on a loopback listener: net, S, inet_csk_accept" {
	check_scenario osw-accept net S 'inet_csk_accept' 98
}

@test "waitpid on a child: ipc, S, do_wait" {
	check_scenario osw-wait ipc S '(^|;)do_wait' 98
}

@test "O_DIRECT read of a dm-delay device: io, D, block I/O wait" {
	check_scenario osw-dio io D 'io_schedule|submit_bio_wait|blk_io_schedule|__blkdev_direct_IO' 80
}

@test "more runnable threads than CPUs: sched, R" {
	f=$BATS_FILE_TMPDIR/spin.txt
	cpus=$(nproc)
	ticks=$(hdr_get ticks "$f")
	got=$(sum_counts "$f" '$6 == "osw-spin" && $2 == "sched"')
	echo "ticks=$ticks cpus=$cpus got=$got"
	[ "$got" -le $((ticks * 4)) ]
	[ "$got" -ge $((ticks * (4 - cpus))) ]
	run -0 awk -F'\t' '!/^#/ && $6 == "osw-spin" && $2 == "sched" && $3 != "R" { bad++ } END { exit bad > 0 }' "$f"
}

@test "the main threads of the scenarios are accounted under their own reason" {
	# Every scenario's main thread sleeps in nanosleep (the launcher in pause).
	f=$(D)
	for s in sleep pipe poll epoll accept wait dio; do
		got=$(sum_counts "$f" "\$6 == \"osw-$s\" && \$2 == \"sleep\"")
		want=$(hdr_get ticks "$f")
		[ "$s" = sleep ] && want=$((want * (N + 1)))
		echo "osw-$s sleep: got=$got want=$want"
		[ "$got" -le "$want" ]
		[ $((got * 100)) -ge $((want * 98)) ]
	done
}

@test "threads: every workload thread in procstat -ka columns with its reason" {
	t=$BATS_FILE_TMPDIR/threads.txt
	run -0 head -n1 "$t"
	assert_output "  PID    TID COMM             TDNAME           KSTACK"
	n=0 dio_away=0
	while read -r pid tid tname; do
		case "$tname" in osw-*-[0-9]*) ;; *) continue ;; esac
		scn=${tname#osw-}; scn=${scn%-*}
		case "$scn" in
		sleep) want='<sleep:S>' ;; mutex) want='<lock:S>' ;;
		pipe|wait) want='<ipc:S>' ;; poll|epoll|accept) want='<net:S>' ;;
		dio) want='<io:D>' ;; *) continue ;;
		esac
		line=$(awk -v p="$pid" -v t="$tid" 'NR > 1 && substr($0, 1, 5) + 0 == p && substr($0, 7, 6) + 0 == t' "$t")
		# A dio reader's read ends every 500 ms: the reader runs for a
		# moment then (returns, submits the next read), and one found
		# in that moment, or being woken (not listed), is not in its
		# I/O wait.  Every other thread waits for good.
		if [ -z "$line" ] && [ "$scn" = dio ]; then
			echo "tid $tid ($tname) not listed (being woken)"
			dio_away=$((dio_away + 1)); n=$((n + 1)); continue
		fi
		[ -n "$line" ] || { echo "tid $tid ($tname) missing"; false; }
		comm=$(echo "${line:13:16}" | sed 's/ *$//')
		tdname=$(echo "${line:30:16}" | sed 's/ *$//')
		kstack=${line:47}
		[ "$comm" = "osw-$scn" ] || { echo "bad COMM: $line"; false; }
		[ "$tdname" = "$tname" ] || { echo "bad TDNAME: $line"; false; }
		[ "${line:46:1}" = " " ] || { echo "KSTACK not at column 48: $line"; false; }
		case "$scn:$kstack" in
		*:__schedule\ *"$want") ;;
		# A dio thread whose read has just completed, woken and
		# waiting for a CPU: still the I/O wait's stack, in the run
		# queue (seen on the debug kernel, where that wait is long).
		dio:__schedule\ *io_schedule*"<sched:R>") ;;
		dio:*"<sched:R>"|dio:"<running>")
			echo "$tname between two reads: $kstack"
			dio_away=$((dio_away + 1)) ;;
		*) echo "bad KSTACK for $tname (want ...$want): $kstack"; false ;;
		esac
		n=$((n + 1))
	done < "$BATS_FILE_TMPDIR/ps.txt"
	echo "checked $n threads ($dio_away dio readers between two reads)"
	[ "$n" -eq $((8 * N)) ]
	# The readers wait 500 ms for each read and run for a moment: most
	# are found in the I/O wait.
	[ "$dio_away" -lt "$N" ]
}
