#!/usr/bin/env bats
# Blocker attribution: who holds the lock a sampled thread waits for.
# tests/workload/offsample-blockers.c builds one of each case (a chain of
# two mutexes, a PI mutex, an rwlock held for writing, a robust mutex, a
# deadlock, a mutex whose owner exited, waits in garbage) and prints the
# thread id of each thread: the holders reported by the module are checked
# against those ids, and the holders' records against what the holders
# were doing (sleeping in blk_hold_and_sleep, waiting for a lock).
#
# Kernels: every test kernel (futex and PI internals differ); the tests
# tagged once-N check only the tools' rendering or the module's own logic
# (budget, views, parameters), and run in one guest of make test
# (tests/guest/run.sh, OFFS_ONCE).

load lib

BLK=$TOP/build/offsample-blockers
OFFS=$TOP/tools/offsample
SYM=$TOP/tools/offsample-symbolize

setup_file() {
	load lib
	offs_load hz=20 key=tid
	out=$BATS_FILE_TMPDIR/blk.out
	"$BLK" > "$out" 2>&1 3>&- &
	echo $! > "$BATS_FILE_TMPDIR/blk.pid"
	wait_line "$out" '^ready$' 600 "$(cat "$BATS_FILE_TMPDIR/blk.pid")" > /dev/null
	# One generation of about 3 s, all waiters blocked throughout.
	cat $P/drain > /dev/null
	sleep 3
	cat $P/drain > "$BATS_FILE_TMPDIR/raw.stacks"
	cp $P/stats "$BATS_FILE_TMPDIR/stats"
	"$SYM" "$BATS_FILE_TMPDIR/raw.stacks" > "$BATS_FILE_TMPDIR/blk.stacks"
	cp "$BATS_FILE_TMPDIR/raw.stacks" "$ARTIFACTS/blockers.stacks" 2>/dev/null || true
}

teardown_file() {
	load lib
	[ ! -f "$BATS_FILE_TMPDIR/blk.pid" ] || kill "$(cat "$BATS_FILE_TMPDIR/blk.pid")" 2>/dev/null || true
	offs_unload
}

tid_of() {	# tid_of NAME: the id the workload printed for thread NAME
	awk -v n="$1" '$1 == n { print $2 }' "$BATS_FILE_TMPDIR/blk.out"
}

# edge WAITER_NAME: the "# blocker:" lines whose waiter is that thread,
# as "kind holder hstate hrec samples" (one line per edge).
edge() {
	local w
	w=$(tid_of "$1")
	awk -F'\t' -v w="$w" '/^# blocker: / {
		delete e
		sub(/^# blocker: /, "")
		for (i = 1; i <= NF; i++) { split($i, kv, "="); e[kv[1]] = substr($i, length(kv[1]) + 2) }
		if (e["waiter"] == w) print e["kind"], e["holder"], e["hstate"], e["hrec"], e["samples"]
	}' "$BATS_FILE_TMPDIR/blk.stacks"
}

# rec ID: the record with that id (its position among the records).
rec() {
	awk -F'\t' -v id="$1" '!/^#/ && ++n == id' "$BATS_FILE_TMPDIR/blk.stacks"
}

@test "chain: blk-chain-a waits for blk-chain-b, which waits for blk-chain-c, which sleeps" {
	local b c ticks hrec
	b=$(tid_of blk-chain-b)
	c=$(tid_of blk-chain-c)
	ticks=$(hdr_get ticks "$BATS_FILE_TMPDIR/blk.stacks")
	[ "$ticks" -ge 20 ]
	run -0 edge blk-chain-a
	assert_output --regexp "^mutex $b sampled [0-9]+ [0-9]+\$"
	# One edge per tick the waiter was counted in: all of them.
	read -r _ _ _ hrec n <<< "$output"
	[ "$n" -ge $((ticks - 1)) ] && [ "$n" -le "$ticks" ]
	# The holder's record at those ticks: blk-chain-b, itself waiting
	# for a lock in pthread_mutex_lock.
	run -0 rec "$hrec"
	assert_output --regexp "^[0-9]+	lock	S	[0-9]+	$b	[^	]*	blk-chain-b	"
	run -0 edge blk-chain-b
	assert_output --regexp "^mutex $c sampled [0-9]+ [0-9]+\$"
	read -r _ _ _ hrec n <<< "$output"
	run -0 rec "$hrec"
	assert_output --regexp "^[0-9]+	sleep	S	[0-9]+	$c	[^	]*	blk-chain-c	"
	assert_output --partial 'blk_hold_and_sleep+'
}

@test "a timed mutex wait (pthread_mutex_timedlock) names its holder too" {
	run -0 edge blk-timed-w
	assert_output --regexp "^mutex $(tid_of blk-chain-c) sampled [0-9]+ [0-9]+\$"
}

@test "PI mutex, robust mutex and rwlock held for writing: the owner from the lock word" {
	run -0 edge blk-pi-wait
	assert_output --regexp "^pi $(tid_of blk-pi-hold) sampled [0-9]+ [0-9]+\$"
	run -0 edge blk-rb-wait
	assert_output --regexp "^robust $(tid_of blk-rb-hold) sampled [0-9]+ [0-9]+\$"
	# A reader and a writer wait for the writer.
	run -0 edge blk-rd-wait
	assert_output --regexp "^rwlock $(tid_of blk-rw-hold) sampled [0-9]+ [0-9]+\$"
	run -0 edge blk-wr-wait
	assert_output --regexp "^rwlock $(tid_of blk-rw-hold) sampled [0-9]+ [0-9]+\$"
}

@test "a holder that exited holding the mutex is reported gone, with the id the mutex kept" {
	run -0 edge blk-gone-w
	assert_output --regexp "^mutex $(tid_of blk-gone-h) gone - [0-9]+\$"
}

# why WAITER: the why= of that waiter's edges to no holder (format v5).
why() {
	awk -F'\t' -v w="$(tid_of "$1")" '/^# blocker: / && $0 ~ "\twaiter=" w "\t" {
		for (i = 1; i <= NF; i++) if ($i ~ /^why=/) print substr($i, 5)
	}' "$BATS_FILE_TMPDIR/blk.stacks"
}

@test "waits in garbage shaped like a locked mutex or rwlock: no holder named, the reason said (holder=? why=invalid)" {
	run -0 edge blk-junk2
	assert_output --regexp '^futex \? unknown - [0-9]+$'
	run -0 why blk-junk2
	assert_output invalid
	run -0 edge blk-junk3
	assert_output --regexp '^futex \? unknown - [0-9]+$'
	run -0 why blk-junk3
	assert_output invalid
	# They were looked at, every tick, and rejected.
	run -0 awk '$1 == "blocker_unknown" { print $2 }' "$BATS_FILE_TMPDIR/stats"
	[ "$output" -ge 40 ]
	# The waiters themselves were sampled (lock waits).
	run -0 awk -F'\t' -v t="$(tid_of blk-junk2)" '!/^#/ && $5 == t { print $2 }' "$BATS_FILE_TMPDIR/blk.stacks"
	assert_output lock
}

@test "a lock word whose owner field is no thread id (0x12345678): no holder, not even a gone one" {
	run -0 edge blk-bigid
	assert_output --regexp '^futex \? unknown - [0-9]+$'
	run -0 why blk-bigid
	assert_output invalid
	run -0 awk -F'\t' -v t="$(tid_of blk-bigid)" '!/^#/ && $5 == t { print $2 }' "$BATS_FILE_TMPDIR/blk.stacks"
	assert_output lock
	run -1 grep -E '^# blocker: .*holder=305419896' "$BATS_FILE_TMPDIR/blk.stacks"
}

@test "a wait on a word whose page was unmapped: the failed read is counted, the reason said (why=unreadable)" {
	local ticks
	ticks=$(hdr_get ticks "$BATS_FILE_TMPDIR/blk.stacks")
	run -0 edge blk-unmapped
	assert_output --regexp '^futex \? unknown - [0-9]+$'
	run -0 why blk-unmapped
	assert_output unreadable
	# Every tick of the generation read that word and failed.
	run -0 awk '$1 == "blocker_read_failed" { print $2 }' "$BATS_FILE_TMPDIR/stats"
	[ "$output" -ge "$ticks" ]
	run -0 awk -F'\t' -v t="$(tid_of blk-unmapped)" '!/^#/ && $5 == t { print $2 }' "$BATS_FILE_TMPDIR/blk.stacks"
	assert_output lock
}

@test "every edge names records of its generation; the header counts them" {
	local n e
	n=$(hdr_get records "$BATS_FILE_TMPDIR/blk.stacks")
	e=$(hdr_get blockers "$BATS_FILE_TMPDIR/blk.stacks")
	[ "$e" -ge 9 ]
	run -0 grep -c '^# blocker: ' "$BATS_FILE_TMPDIR/blk.stacks"
	assert_output "$e"
	# wrec always, hrec unless gone/running/unsampled: ids 1..records.
	run -0 awk -v n="$n" '/^# blocker: / {
		if (!match($0, /wrec=[0-9]+/)) { print "no wrec: " $0; next }
		id = substr($0, RSTART + 5, RLENGTH - 5) + 0; if (id < 1 || id > n + 0) print "bad wrec: " $0
		if (match($0, /hrec=[0-9]+/)) { id = substr($0, RSTART + 5, RLENGTH - 5) + 0; if (id < 1 || id > n + 0) print "bad hrec: " $0 }
	}' "$BATS_FILE_TMPDIR/blk.stacks"
	assert_output ''
}

# bats test_tags=once-1
@test "offsample blockers: chains to the root holder, its reason and frames; the deadlock is a cycle" {
	local a b c x y
	a=$(tid_of blk-chain-a) b=$(tid_of blk-chain-b) c=$(tid_of blk-chain-c)
	x=$(tid_of blk-dl-x) y=$(tid_of blk-dl-y)
	run -0 "$OFFS" blockers "$BATS_FILE_TMPDIR/raw.stacks"
	echo "$output"
	assert_line --regexp "^samples=[0-9]+ waiter=$a wcomm=blk-main wname=blk-chain-a reason=lock kind=mutex object=0x[0-9a-f]+ holder=$b hname=blk-chain-b hwhat=lock chain=$a>$b>$c root=$c rname=blk-chain-c rwhat=sleep rframes=[^ ]*blk_hold_and_sleep"
	assert_line --regexp "^samples=[0-9]+ waiter=$x .* holder=$y hname=blk-dl-y hwhat=lock chain=$x>$y>$x>cycle "
	assert_line --regexp " waiter=$(tid_of blk-gone-w) .* hwhat=gone chain=[0-9]+>$(tid_of blk-gone-h) root=$(tid_of blk-gone-h) .* rwhat=gone rframes=-\$"
	# A wait that names no holder ends its chain at "?", with the reason.
	assert_line --regexp "^samples=[0-9]+ waiter=$(tid_of blk-junk2) .* kind=futex object=0x[0-9a-f]+ holder=\\? hname=- hwhat=unknown:invalid chain=$(tid_of blk-junk2)>\\? root=\\? rname=- rwhat=unknown:invalid rframes=-\$"
	# The same from the live file, piped.
	run -0 bash -c "cat $P/stacks | '$OFFS' blockers"
	assert_line --regexp "^samples=[0-9]+ waiter=$a .* chain=$a>$b>$c "
}

# bats test_tags=once-2
@test "flamegraph --blockers: waiter stack, [waits for mutex], the holder's stack in the chain palette" {
	local svg=$BATS_FILE_TMPDIR/blk.svg
	run -0 "$OFFS" blockers --folded "$BATS_FILE_TMPDIR/raw.stacks"
	# The waiter blk-chain-b's stack, then the holder's from its leaf.
	assert_line --regexp '^blk-main;.*chain_b;[^ ]*pthread_mutex_lock[^ ]*;\[waits for mutex\];[^ ]*_\[w\];.*blk_hold_and_sleep_\[w\];.*blk-chain-c_\[w\] [0-9]+$'
	assert_line --regexp '^blk-main;.*;\[waits for mutex\];\[gone\]_\[w\] [0-9]+$'
	"$OFFS" flamegraph --blockers -o "$svg" "$BATS_FILE_TMPDIR/raw.stacks"
	run -0 grep -c '<title>\[waits for mutex\]' "$svg"
	[ "$output" -ge 1 ]
	run -0 grep -c '<title>blk_hold_and_sleep ' "$svg"
}

# Once (make test): a parameter of the module's own.
# bats test_tags=once-2
@test "blockers=0: no edges, and the statistics say so" {
	local f=$BATS_TEST_TMPDIR/off.stacks
	echo 0 > $PARAM/blockers
	cat $P/drain > /dev/null
	sleep 1
	cat $P/drain > "$f"
	echo 1 > $PARAM/blockers
	[ "$(hdr_get blockers "$f")" = 0 ]
	run -1 grep '^# blocker: ' "$f"
	run -0 "$OFFS" blockers "$f"
	assert_line 'No waiter -> holder edges in the input.'
}

@test "a rewound stacks file starts a new pass: records added meanwhile are listed" {
	cp /bin/sleep "$BATS_TEST_TMPDIR/blkrewind"
	run -0 perl -e '
		open(my $f, "<", "/proc/offsample/stacks") or die "open: $!";
		my @a = <$f>;
		system("$ARGV[0] 30 >/dev/null 2>&1 &");
		sleep 2;
		seek($f, 0, 0) or die "seek: $!";
		my @b = <$f>;
		my $n = grep { !/^#/ } @b;
		my ($h) = map { /^# records: (\d+)/ ? $1 : () } @b;
		printf "first=%d second=%d has=%d\n", scalar(grep { !/^#/ } @a), $n,
			scalar(grep { /\tblkrewind\t/ } @b);' "$BATS_TEST_TMPDIR/blkrewind"
	pkill -x blkrewind || true
	echo "$output"
	assert_output --regexp '^first=[0-9]+ second=[0-9]+ has=[1-9]$'
}

# Once (make test): the reduced view is the module's own printing.
# bats test_tags=once-1
@test "group= reader: edges without the lock address" {
	local f=$BATS_TEST_TMPDIR/group.stacks
	kill "$(cat "$BATS_FILE_TMPDIR/blk.pid")"
	offs_load hz=20 key=tid group=4242
	"$BLK" > "$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
	echo $! > "$BATS_FILE_TMPDIR/blk.pid"
	wait_line "$BATS_TEST_TMPDIR/out" '^ready$' 600 "$!" > /dev/null
	sleep 1
	setpriv --reuid=65534 --regid=65534 --groups=4242 cat $P/stacks > "$f"
	run -0 grep -c '^# blocker: .*	object=hidden	' "$f"
	[ "$output" -ge 9 ]
	run -1 grep -E '^# blocker: .*object=0x' "$f"
	# A gone holder's id is a word of the waiter's memory, not a thread
	# the module found: hidden too (root sees it, test above).
	local w
	w=$(awk '$1 == "blk-gone-w" { print $2 }' "$BATS_TEST_TMPDIR/out")
	run -0 grep -E "^# blocker: .*	waiter=$w	.*	hstate=gone" "$f"
	assert_output --regexp '	holder=-	hpid=-	'
}

# Once (make test): the per-tick lookup budget is the module's own.
# bats test_tags=once-1
@test "a process with more lock waiters than a tick looks up does not take the others' share" {
	local f=$BATS_TEST_TMPDIR/crowd.stacks crowd late ticks share w n bad=0
	# The walk visits processes in the order they were made: the
	# workload of setup_file, 1,200 waiters of one mutex, then a second
	# workload.  0.5.10 gave the first 1,024 lookups of a tick to
	# whoever came first: none were left for the second workload.
	offs_load hz=10 key=tid
	"$BLK" --crowd 1200 > "$BATS_TEST_TMPDIR/crowd.out" 2>&1 3>&- &
	crowd=$!
	wait_line "$BATS_TEST_TMPDIR/crowd.out" '^ready$' 900 "$crowd" > /dev/null
	"$BLK" > "$BATS_TEST_TMPDIR/late.out" 2>&1 3>&- &
	late=$!
	wait_line "$BATS_TEST_TMPDIR/late.out" '^ready$' 600 "$late" > /dev/null
	sleep 1
	cat $P/drain > /dev/null
	sleep 3
	cat $P/drain > "$f"
	share=$(stat_get blocker_share)
	ticks=$(hdr_get ticks "$f")
	echo "# $ticks ticks, share $share, dropped $(stat_get blocker_dropped)" >&3
	[ "$ticks" -ge 10 ]
	# Each workload asks for about 14 lookups a tick: the crowd's share
	# is what the two leave of 1,024.
	[ "$share" -ge $((1024 - 2 * 20)) ] && [ "$share" -le $((1024 - 2 * 10)) ]
	# Every waiter of the late workload that names a holder has an edge
	# at (nearly) every tick, as the first one's have.
	for w in blk-chain-a blk-chain-b blk-timed-w blk-pi-wait blk-rb-wait blk-rd-wait blk-wr-wait; do
		n=$(awk -F'\t' -v t="$(awk -v n="$w" '$1 == n { print $2 }' "$BATS_TEST_TMPDIR/late.out")" '/^# blocker: / && !/\thstate=unknown/ {
			for (i = 1; i <= NF; i++) if ($i ~ /^(# blocker: )?samples=/) { s = $i; sub(/.*samples=/, "", s) }
			for (i = 1; i <= NF; i++) if ($i == "waiter=" t) { n += s; any = 1 } }
			END { if (any) print n }' "$f")
		echo "# late $w: ${n:-no} edge samples" >&3
		[ -n "$n" ] && [ "$n" -ge $((ticks - 2)) ] || bad=1
	done
	[ "$bad" = 0 ]
	# The crowd's edges: at most its share each tick.
	run -0 awk -F'\t' -v p="$crowd" '/^# blocker: / {
		s = 0; w = 0
		for (i = 1; i <= NF; i++) { if ($i ~ /samples=/) { s = $i; sub(/.*samples=/, "", s) } if ($i == "wpid=" p) w = 1 }
		if (w) t += s } END { print t + 0 }' "$f"
	echo "# crowd: $output edge samples" >&3
	# The share moves by a few lookups from tick to tick since 0.8.0:
	# other processes' run-queue waits (kind cpu) come and go.  Five a
	# tick of slack; taking everyone's share would be 38 a tick more.
	[ "$output" -le $(((share + 5) * ticks)) ]
	[ "$output" -ge $((share * (ticks - 2))) ]
	kill "$crowd" "$late"
}
