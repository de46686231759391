#!/usr/bin/env bats
# Sessions (/proc/offsample/session): consumers that never disturb each
# other.  A session counts its own window at its own rate, key and
# filter; the default consumer (stacks, drain: a cron job) keeps its
# rate, its generations and exact counts whatever sessions, readers and
# recordings run beside it.  Exactness is checked with sleepers in a
# cgroup of their own: each of them is counted once at every tick of
# every consumer that wants it, so a window's samples of them are exactly
# 4 x its ticks.
#
# Kernels: every test kernel: a session's filter is the kernel's cgroup
# hierarchy and pid namespaces, and its windows are swapped against the
# sampler's ticks (locking on each kernel's mutexes and seq_file).
# The test tagged once-1 checks the module's own bounds and its refusals
# of bad settings: one guest of make test runs it (OFFS_ONCE).

load lib

CGN=offs-sess
CG=/sys/fs/cgroup/$CGN
OFFS=$TOP/tools/offsample

setup_file() {
	load lib
	offs_load hz=19
	mkdir -p "$CG"
	local i
	: > "$BATS_FILE_TMPDIR/pids"
	for i in 1 2 3 4; do
		# In the group before the exec: every tick sees it there.
		( echo "$BASHPID" > "$CG/cgroup.procs"; exec sleep 1000 ) 3>&- &
		echo $! >> "$BATS_FILE_TMPDIR/pids"
	done
	sleep 0.5
}

teardown_file() {
	load lib
	local p
	while read -r p; do kill "$p" 2>/dev/null || true; done < "$BATS_FILE_TMPDIR/pids"
	sleep 0.3
	rmdir "$CG" 2>/dev/null || true
	offs_unload
}

setup() {
	d=$BATS_TEST_TMPDIR
}

# sleepers FILE: samples of the four sleepers in FILE.
sleepers() {
	sum_counts "$1" "\$11 == \"/$CGN\" && \$6 == \"sleep\""
}

@test "session: its own window at its own rate, key and cgroup; the drain beside it is not reset, keeps 19 Hz, counts exactly" {
	local fd t td g0
	cat $P/drain > /dev/null
	g0=$(stat_get generation)
	exec {fd}<>$P/session
	echo "hz=97 key=comm,pid cgroup=/$CGN" >&$fd
	sleep 3
	cat <&$fd > "$d/s"
	cat $P/drain > "$d/d"
	exec {fd}<&-
	# The session's window: its settings in its header, the sleepers
	# alone, each at every one of its ticks, keyed by pid.
	assert_equal "$(hdr_get source "$d/s")" session
	assert_equal "$(hdr_get hz "$d/s")" 97
	assert_equal "$(hdr_get key "$d/s")" comm,pid
	t=$(hdr_get ticks "$d/s")
	[ "$t" -gt 0 ]
	assert_equal "$(sum_counts "$d/s")" $((4 * t))
	assert_equal "$(hdr_get samples "$d/s")" $((4 * t))
	assert_equal "$(awk -F'\t' '!/^#/ { print $6, $11 }' "$d/s" | sort -u)" "sleep /$CGN"
	assert_equal "$(awk -F'\t' '!/^#/ { print $4 }' "$d/s" | sort -n | tr '\n' ' ')" \
		"$(sort -n "$BATS_FILE_TMPDIR/pids" | tr '\n' ' ')"
	# The default consumer: the generation it had (no reset), its rate,
	# its key, the sleepers exactly at each of its ticks.
	assert_equal "$(hdr_get generation "$d/d")" "$g0"
	assert_equal "$(hdr_get source "$d/d")" drain
	assert_equal "$(hdr_get hz "$d/d")" 19
	assert_equal "$(hdr_get key "$d/d")" comm
	td=$(hdr_get ticks "$d/d")
	assert_equal "$(sleepers "$d/d")" $((4 * td))
	assert_equal "$(cat $PARAM/hz) $(cat $PARAM/key) $(cat $PARAM/cgroup)" "19 comm "
	# Each at its own rate over its own window: ticks are due every
	# 1/hz s of each consumer's clock (at most one more than rate x
	# duration; fewer only where the sampler could not keep up under
	# emulation, which must not touch the default's 19 Hz).
	echo "session: $t ticks in $(hdr_get duration "$d/s") s; drain: $td ticks in $(hdr_get duration "$d/d") s"
	run -0 awk -v t="$t" -v d="$(hdr_get duration "$d/s")" 'BEGIN { exit !(t <= 97 * d + 2 && t >= 0.7 * 97 * d) }'
	run -0 awk -v t="$td" -v d="$(hdr_get duration "$d/d")" 'BEGIN { exit !(t <= 19 * d + 2 && t >= 0.9 * 19 * d) }'
}

@test "session: consecutive reads are consecutive windows that partition its samples; key tid and pid=" {
	local fd p w1 w2
	p=$(head -n1 "$BATS_FILE_TMPDIR/pids")
	exec {fd}<>$P/session
	echo "key=comm,tid pid=$p" >&$fd
	sleep 1
	cat <&$fd > "$d/w1"
	sleep 1
	# Each read from offset 0 is a new window: rewind the descriptor
	# (a second cat would start at the end of the first window).
	perl -e 'open(my $f, "+<&=", $ARGV[0]) or die; sysseek($f, 0, 0); local $/; print <$f>' "$fd" > "$d/w2"
	exec {fd}<&-
	w1=$(hdr_get generation "$d/w1")
	w2=$(hdr_get generation "$d/w2")
	assert_equal "$w2" $((w1 + 1))
	assert_equal "$(hdr_get key "$d/w1")" comm,tid
	# One thread, one record a window, counted at every tick.
	assert_equal "$(awk -F'\t' '!/^#/ { print $4, $5, $6 }' "$d/w1" "$d/w2" | sort -u)" "$p $p sleep"
	assert_equal "$(sum_counts "$d/w1")" "$(hdr_get ticks "$d/w1")"
	assert_equal "$(sum_counts "$d/w2")" "$(hdr_get ticks "$d/w2")"
	[ "$(hdr_get ticks "$d/w2")" -gt 0 ]
}

@test "drains every second stay exact while sessions come and go, readers read and offsample record runs" {
	local i s0 s1 total=0 td t bg1 bg2 bg3 bg4 bg5 n
	echo 0 > $PARAM/enabled		# returns once no tick is in progress
	cat $P/drain > /dev/null
	s0=$(stat_get samples)
	echo 1 > $PARAM/enabled
	(
		for i in 1 2 3 4 5; do
			exec {f}<>$P/session
			echo "hz=50 key=comm,tid,wobj" >&$f
			sleep 0.3
			cat <&$f > /dev/null
			exec {f}<&-
		done
	) 3>&- &
	bg1=$!
	( for i in $(seq 10); do cat $P/stacks $P/threads > /dev/null; done ) 3>&- &
	bg2=$!
	"$OFFS" record -d 2 -F 37 -c "/$CGN" -o "$d/rec" 3>&- 2> "$d/rec.err" &
	bg3=$!
	"$OFFS" record -F 29 -o "$d/cmd" -- sleep 2 3>&- 2> "$d/cmd.err" &
	bg4=$!
	"$OFFS" top -n 3 -i 0.5 --no-symbolize > "$d/top" 3>&- 2> "$d/top.err" &
	bg5=$!
	for i in 1 2 3 4 5; do
		sleep 1
		cat $P/drain > "$d/d$i"
	done
	wait "$bg1" "$bg2" "$bg3" "$bg4" "$bg5"
	echo 0 > $PARAM/enabled
	cat $P/drain > "$d/d6"
	s1=$(stat_get samples)
	echo 1 > $PARAM/enabled
	for i in 1 2 3 4 5 6; do
		td=$(hdr_get ticks "$d/d$i")
		assert_equal "$(hdr_get hz "$d/d$i") $(hdr_get key "$d/d$i")" "19 comm"
		assert_equal "$(sleepers "$d/d$i")" $((4 * td))
		assert_equal "$(hdr_get samples "$d/d$i")" "$(sum_counts "$d/d$i")"
		total=$((total + $(sum_counts "$d/d$i")))
	done
	# The drains hold every sample the default consumer took, no more.
	assert_equal "$total" $((s1 - s0))
	# The recording: its own rate and filter, the sleepers at each tick.
	assert_equal "$(cat "$d/rec.err")" ""
	assert_equal "$(hdr_get source "$d/rec") $(hdr_get hz "$d/rec")" "session 37"
	assert_equal "$(sum_counts "$d/rec")" $((4 * $(hdr_get ticks "$d/rec")))
	# record -- CMD at 29 Hz: the command's sleep alone, at most once a
	# tick of its window, missing only the ticks before its exec and
	# after its exit (shell steps under emulation): 70% of the window,
	# or (those steps slow on a loaded host) 80% of sleep's own 2 s.
	assert_equal "$(cat "$d/cmd.err")" ""
	assert_equal "$(hdr_get source "$d/cmd") $(hdr_get hz "$d/cmd") $(hdr_get key "$d/cmd")" "session 29 comm,pid"
	assert_equal "$(sum_counts "$d/cmd" '$6 != "sleep" && $6 != "offsample"')" 0
	n=$(sum_counts "$d/cmd" '$6 == "sleep"')
	t=$(hdr_get ticks "$d/cmd")
	echo "record -- sleep 2: $n samples of sleep in $t ticks"
	[ "$n" -le "$t" ] && { [ $((n * 10)) -ge $((t * 7)) ] || [ "$n" -ge $((2 * 29 * 8 / 10)) ]; }
	# top: three refreshes, its own windows, no word of the drains.
	assert_equal "$(cat "$d/top.err")" ""
	assert_equal "$(grep -c '^last [0-9.]* s: ' "$d/top")" 3
	refute grep -q 'generation changed' "$d/top"
	assert_equal "$(stat_get sessions)" 0
}

# bats test_tags=once-1
@test "sessions are bounded (max_sessions, EBUSY counted), a dead reader's session is reclaimed, bad settings are refused with errno" {
	local a b s r0 pid err
	echo 2 > $PARAM/max_sessions
	r0=$(stat_get sessions_refused)
	exec {a}<>$P/session
	exec {b}<>$P/session
	assert_equal "$(stat_get sessions)" 2
	run bash -c ": <> $P/session"
	assert_failure
	assert_output --partial "Device or resource busy"
	assert_equal "$(stat_get sessions_refused)" $((r0 + 1))
	exec {a}<&-
	( exec {c}<>$P/session; exec sleep 100 ) 3>&- &
	pid=$!
	sleep 0.5
	assert_equal "$(stat_get sessions)" 2
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	assert_equal "$(stat_get sessions)" 1
	exec {b}<&-
	assert_equal "$(stat_get sessions)" 0
	echo 4 > $PARAM/max_sessions
	exec {s}<>$P/session
	for bad in "hz=0:Invalid argument" "hz=1001:Invalid argument" "key=bogus:Invalid argument" \
		"cgroup=/offs-no-such-group:No such file or directory" "pid=999999:No such process" \
		"frequency=10:Invalid argument"; do
		err=$( { echo "${bad%%:*}" >&$s; } 2>&1 ) && fail "${bad%%:*} accepted"
		assert_regex "$err" "${bad#*:}\$"
	done
	# Nothing changed by the refusals: still the module's rate.
	cat <&$s > "$d/w"
	exec {s}<&-
	assert_equal "$(hdr_get hz "$d/w") $(hdr_get key "$d/w")" "19 comm"
	dmesg_clean
}

@test "access: a group= member's session has the group view, no rate above hz, never the last free slot; others get nothing" {
	local a b g=(setpriv --reuid=65534 --regid=65534 --groups=4242)
	offs_load hz=19 group=4242
	assert_equal "$(stat -c '%a %U %g' $P/session)" "660 root 4242"
	run "${g[@]}" bash -c "exec 3<>$P/session && echo 'hz=19 cgroup=/$CGN' >&3 && sleep 1 && cat <&3"
	assert_success
	assert_line '# source: session'
	assert_line '# view: group'
	run "${g[@]}" bash -c "exec 3<>$P/session && echo hz=20 >&3"
	assert_failure
	assert_output --partial 'Operation not permitted'
	# Two slots: root holds one, the other stays root's.
	echo 2 > $PARAM/max_sessions
	exec {a}<>$P/session
	run "${g[@]}" bash -c ": <> $P/session"
	assert_failure
	assert_output --partial 'Device or resource busy'
	exec {b}<>$P/session
	exec {a}<&- {b}<&-
	echo 4 > $PARAM/max_sessions
	# Outside the group; uid 0 without CAP_SYS_ADMIN.
	run setpriv --reuid=65534 --regid=4243 --clear-groups bash -c ": <> $P/session"
	assert_failure
	assert_output --partial 'Permission denied'
	run setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all bash -c ": <> $P/session"
	assert_failure
	assert_output --partial 'Permission denied'
	assert_equal "$(stat_get sessions)" 0
}

@test "session: blocker lines of its own window name its own records (by tid), and pairs the drain beside it saw" {
	local fd bp out=$d/blk.out n
	"$TOP/build/offsample-blockers" > "$out" 2>&1 3>&- &
	bp=$!
	wait_line "$out" '^ready$' 600 "$bp" > /dev/null
	cat $P/drain > /dev/null
	exec {fd}<>$P/session
	echo "hz=23 key=comm,tid" >&$fd
	sleep 2
	cat <&$fd > "$d/s"
	cat $P/drain > "$d/dr"
	exec {fd}<&-
	kill "$bp"
	wait "$bp" 2>/dev/null || true
	n=$(hdr_get blockers "$d/s")
	[ "$n" -gt 0 ]
	assert_equal "$(grep -c '^# blocker: ' "$d/s")" "$n"
	# Each edge's waiter record (and holder record, when sampled) is a
	# record of this window, of the thread the edge names.
	run -0 perl -F'\t' -lane '
		if (/^# blocker: /) { my %e = map { split /=/, $_, 2 } @F[1 .. $#F]; push @e, \%e; next }
		push @r, [@F] unless /^#/;
		END {
			for my $e (@e) {
				my $w = $r[$e->{wrec} - 1] or die "wrec $e->{wrec} of " . @r . "\n";
				die "wrec $e->{wrec}: $w->[6] is not $e->{wname}\n" unless $w->[6] eq $e->{wname};
				next if $e->{hrec} eq "-";
				my $h = $r[$e->{hrec} - 1] or die "hrec $e->{hrec}\n";
				die "hrec $e->{hrec}: $h->[6] is not $e->{hname}\n" unless $h->[6] eq $e->{hname};
			}
			print scalar @e, " edges checked";
		}' "$d/s"
	# The chain's first link, and none of the workload's pairs the drain
	# over the same time did not see (the workload's waits last; a run-queue
	# wait of another thread may last less than a tick, and the session's
	# ticks are not the drain's: rcu_preempt waiting for bash, 2026-12-06).
	pairs() { perl -F'\t' -lne 'next unless /^# blocker: /; my %e = map { split /=/, $_, 2 } @F[1 .. $#F]; print "$e{wname} $e{hname}" if $e{wname} =~ /^blk-/' "$1" | sort -u; }
	pairs "$d/s" | grep -qx 'blk-chain-a blk-chain-b'
	assert_equal "$(comm -23 <(pairs "$d/s") <(pairs "$d/dr"))" ""
}
