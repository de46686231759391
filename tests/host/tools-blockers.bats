#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# offsample blockers and flamegraph --blockers on a real capture: the
# drain of tests/guest/58-blockers.bats on 6.12 (key=tid), whose workload
# printed these thread ids: blk-chain-c 363, blk-chain-b 364, blk-chain-a
# 365, blk-pi-hold 366, blk-pi-wait 367, blk-rb-hold 368, blk-rb-wait 369,
# blk-rw-hold 370, blk-rd-wait 371, blk-wr-wait 372, blk-dl-x 373,
# blk-dl-y 374, blk-gone-h 375 (exited), blk-gone-w 376, blk-junk2 377,
# blk-junk3 378.  The guest test checks the module; this one the tools.

load tools-common

BFIX=$SFIX/blockers-drain-6.12.117.txt

setup() {
	T=$BATS_TEST_TMPDIR
	export OFFSAMPLE_PROC=$T/no-module OFFSAMPLE_SYS=$T/no-sys
}

@test "blockers: one line per pair, chains to the root, the deadlock as a cycle, the gone holder" {
	run -0 "$OFFS" blockers --no-symbolize "$BFIX"
	assert_line --index 0 '# offsample blockers: 9 waiter -> holder pairs, 567 waiter samples with a known holder (lock samples in the input: 693, with a known holder: 567)'
	[ "$(grep -c '^samples=' <<< "$output")" = 9 ]
	assert_line 'samples=63 waiter=365 wcomm=blk-main wname=blk-chain-a reason=lock kind=mutex object=0x5578fab63340 holder=364 hname=blk-chain-b hwhat=lock chain=365>364>363 root=363 rname=blk-chain-c rwhat=sleep rframes=libc.so.6+0xcf545;libc.so.6+0xd3e53;libc.so.6+0xd3d8a;offsample-blockers+0x12f7;offsample-blockers+0x1639'
	assert_line --regexp '^samples=63 waiter=367 .* kind=pi .* holder=366 hname=blk-pi-hold hwhat=sleep chain=367>366 root=366 '
	assert_line --regexp '^samples=63 waiter=369 .* kind=robust .* holder=368 '
	assert_line --regexp '^samples=63 waiter=371 .* kind=rwlock .* holder=370 '
	assert_line --regexp '^samples=63 waiter=372 .* kind=rwlock .* holder=370 '
	assert_line --regexp '^samples=63 waiter=373 .* holder=374 hname=blk-dl-y hwhat=lock chain=373>374>373>cycle '
	assert_line --regexp '^samples=63 waiter=376 .* holder=375 hname=- hwhat=gone chain=376>375 root=375 rname=- rwhat=gone rframes=-$'
	refute_output --partial 'waiter=377 '
	# --frames and --offsets shape the root's frames.
	run -0 "$OFFS" blockers --no-symbolize --frames 1 --offsets "$BFIX"
	assert_line --regexp '^samples=63 waiter=365 .* rframes=libc.so.6\+0xcf545$'
}

# unknown_fixture OUT: the capture with two waits that name no holder, as
# a v5 module writes them: blk-junk2's futex words did not validate, and
# blk-chain-c (the root of a chain) waits on a pipe nobody else has open.
unknown_fixture() {
	awk -v OFS='\t' '
		/^# blockers: / { print "# blockers: 11"; next }
		{ print }
		/^# blocker: / && ++n == 9 {
			print "# blocker: samples=63", "kind=futex", "object=0x5578fab63400", "waiter=377", "wpid=360", "wname=blk-junk2", "wrec=114", "holder=?", "hpid=?", "hcomm=-", "hname=-", "hstate=unknown", "hrec=-", "why=invalid"
			print "# blocker: samples=60", "kind=pipe", "object=fd3", "waiter=363", "wpid=360", "wname=blk-chain-c", "wrec=101", "holder=?", "hpid=?", "hcomm=-", "hname=-", "hstate=unknown", "hrec=-", "why=nobody"
		}' "$BFIX" > "$1"
}

@test "blockers: a wait that names no holder (holder=?) says why and ends its chains there" {
	unknown_fixture "$T/u.stacks"
	run -0 "$OFFS" blockers --no-symbolize "$T/u.stacks"
	assert_line --index 0 '# offsample blockers: 11 waiter -> holder pairs, 567 waiter samples with a known holder, 123 with none named (holder=?) (lock samples in the input: 693, with a known holder: 567)'
	assert_line 'samples=63 waiter=377 wcomm=blk-main wname=blk-junk2 reason=lock kind=futex object=0x5578fab63400 holder=? hname=- hwhat=unknown:invalid chain=377>? root=? rname=- rwhat=unknown:invalid rframes=-'
	# The chain through blk-chain-c ends at its pipe, with the reason.
	assert_line --regexp '^samples=63 waiter=365 .* holder=364 hname=blk-chain-b hwhat=lock chain=365>364>363>\? root=\? rname=- rwhat=unknown:nobody rframes=-$'
	# Folded: the reason stands where the holder's stack would.
	run -0 "$OFFS" blockers --no-symbolize --folded "$T/u.stacks"
	assert_line --regexp '^blk-main;.*;\[waits for futex\];\[unknown: invalid\]_\[w\] 63$'
	run -0 perl -ne 'BEGIN { $n = 0 } if (/'"$FOLDED_RE"'/) { $n += $2 } else { print "not folded: $_" } END { print "total $n\n" }' <<< "$output"
	assert_output 'total 690'
	# The picture has no arrow to nobody.
	run -0 "$OFFS" blockers --no-symbolize --dot "$T/u.stacks"
	refute_output --partial '"t?"'
	refute_output --partial 'unknown'
}

@test "blockers: filters keep the edges of the records kept, renumbered" {
	run -0 "$OFFS" blockers --no-symbolize --tid 365,364 "$BFIX"
	[ "$(grep -c '^samples=' <<< "$output")" = 2 ]
	# blk-chain-b's record is kept: what it did is known; blk-chain-c's
	# is not: it was sampled, no more is known.
	assert_line --regexp '^samples=63 waiter=365 .* holder=364 hname=blk-chain-b hwhat=lock chain=365>364>363 root=363 rname=blk-chain-c rwhat=sampled rframes=-$'
	# The filtered file itself: edges renumbered into its records.
	perl "$ROOT/tools/lib/offsample-select.pl" --tid 365,364 -o "$T/f.stacks" "$BFIX"
	run -0 grep -c '^# blocker: ' "$T/f.stacks"
	assert_output 2
	assert_equal "$(sed -n 's/^# blockers: //p' "$T/f.stacks")" 2
	run -0 awk -F'\t' '/^# blocker: / { print $7, $13 }' "$T/f.stacks"
	assert_line 'wrec=1 hrec=-'
	assert_line 'wrec=2 hrec=1'
	run -0 awk -F'\t' '!/^#/ { print ++n, $5 }' "$T/f.stacks"
	assert_output $'1 364\n2 365'
}

@test "blockers --folded: waiter root first, [waits for KIND], holder leaf first marked _[w]; totals are the edges' samples" {
	run -0 "$OFFS" blockers --no-symbolize --folded "$BFIX"
	# Every line parses as flamegraph.pl reads it; the counts add up.
	run -0 perl -ne 'BEGIN { $n = 0 } if (/'"$FOLDED_RE"'/) { $n += $2 } else { print "not folded: $_" } END { print "total $n\n" }' <<< "$output"
	assert_output 'total 567'
	run -0 "$OFFS" blockers --no-symbolize --folded "$BFIX"
	assert_line 'blk-main;libc.so.6+0x1098ec;libc.so.6+0x891f5;offsample-blockers+0x1605;libc.so.6+0x8c482;libc.so.6+0x8612b;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;__futex_wait;futex_wait_queue;schedule;__schedule;[waits for mutex];__schedule_[w];schedule_[w];do_nanosleep_[w];hrtimer_nanosleep_[w];common_nsleep_[w];__x64_sys_clock_nanosleep_[w];do_syscall_64_[w];entry_SYSCALL_64_after_hwframe_[w];libc.so.6+0xcf545_[w];libc.so.6+0xd3e53_[w];libc.so.6+0xd3d8a_[w];offsample-blockers+0x12f7_[w];offsample-blockers+0x1639_[w];libc.so.6+0x891f5_[w];libc.so.6+0x1098ec_[w];blk-chain-c_[w] 63'
	assert_line --regexp '^blk-main;.*;\[waits for mutex\];\[gone\]_\[w\] 63$'
}

@test "blockers --folded through the real flamegraph.pl --colors chain: every edge's samples, waiters blue, holders aqua" {
	need_fgpl
	"$OFFS" blockers --no-symbolize --folded "$BFIX" > "$T/b.folded"
	perl "$FGPL" --colors chain --hash "$T/b.folded" > "$T/b.svg"
	xmllint --noout "$T/b.svg"
	run -0 grep -c '<title>all (567 samples, 100%)</title>' "$T/b.svg"
	# Its [waits for KIND] frames weigh what the input's edges of that
	# kind counted (# blocker: lines, read here with awk).
	for k in mutex pi robust rwlock; do
		want=$(awk -F'\t' -v k="kind=$k" '/^# blocker: / && $2 == k { sub(/^# blocker: samples=/, "", $1); n += $1 } END { print n + 0 }' "$BFIX")
		got=$(perl -ne 'BEGIN { $n = 0 } $n += $1 if m{<title>\[waits for '"$k"'\] \((\d+) samples}; END { print $n }' "$T/b.svg")
		echo "$k: flamegraph.pl $got, edges $want"
		[ "$want" -gt 0 ] && [ "$got" = "$want" ]
	done
	# The holder's frames (after [waits for], marked _[w]) are shown
	# without the mark and filled aqua (green = blue); the waiter's blue.
	run -0 perl -0ne 'print "$1 $2 $3\n" while m{<title>blk-chain-c \(63 samples[^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"}g' "$T/b.svg"
	assert_output --regexp '^[0-9]+ ([0-9]+) \1$'
	run -0 perl -0ne 'print "$1 $2 $3\n" while m{<title>__x64_sys_futex \(\d+ samples[^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"}g' "$T/b.svg"
	[ "${#lines[@]}" -ge 1 ]
	for l in "${lines[@]}"; do
		read -r r g b <<< "$l"
		[ "$r" = "$g" ] && [ "$b" -gt "$r" ]
	done
	refute_output --partial '_[w]'
	run -1 grep -F '_[w]' "$T/b.svg"
}

@test "flamegraph --blockers: the chain palette; refused with --seconds or without edges" {
	run -0 "$OFFS" flamegraph --blockers --no-symbolize -o "$T/b.svg" "$BFIX"
	run -0 grep -c '<title>\[waits for mutex\]' "$T/b.svg"
	run -0 grep -o '<text[^>]*>Blockers: waiter -- holder' "$T/b.svg"
	run -2 "$OFFS" flamegraph --blockers --seconds -o "$T/c.svg" "$BFIX"
	assert_output --partial '--seconds is not supported with it'
	run -1 "$OFFS" flamegraph --blockers --no-symbolize -o "$T/d.svg" "$V2S"
	assert_output 'offsample flamegraph: no waiter -> holder edges in the input (see offsample blockers)'
	[ ! -e "$T/d.svg" ]
}

@test "blockers: data from before blocker attribution, usage errors" {
	run -0 "$OFFS" blockers --no-symbolize "$V2S"
	assert_line 'No waiter -> holder edges in the input (recorded with blockers=0, or by a module before 0.3).'
	run -2 "$OFFS" blockers --frames 0 "$BFIX"
	assert_output 'offsample blockers: --frames needs a number from 1 to 64, not "0" (see offsample blockers --help)'
	run -2 "$OFFS" blockers --bogus "$BFIX"
	assert_output 'offsample blockers: unknown option --bogus (see offsample blockers --help)'
	run -0 "$OFFS" blockers --help
	assert_line --partial 'Usage: offsample blockers'
}

@test "offsample-symbolize keeps the edges in place" {
	"$ROOT/tools/offsample-symbolize" "$BFIX" > "$T/s.stacks" 2>/dev/null
	diff <(grep '^# blocker: ' "$BFIX") <(grep '^# blocker: ' "$T/s.stacks")
	diff <(grep -v '^#' "$BFIX" | cut -f1-8) <(grep -v '^#' "$T/s.stacks" | cut -f1-8)
}

@test "record -p's filter (offsample-lib.pl filter --pids) renumbers the edges too" {
	OFFSAMPLE_PROG='offsample record' perl "$ROOT/tools/lib/offsample-lib.pl" filter --pids 360 < "$BFIX" > "$T/p.stacks"
	assert_equal "$(sed -n 's/^# records: //p' "$T/p.stacks")" 16
	assert_equal "$(sed -n 's/^# blockers: //p' "$T/p.stacks")" 9
	# The same pairs, the same holders' records, as from the whole drain.
	diff <("$OFFS" blockers --no-symbolize "$BFIX" | grep '^samples=') \
		<("$OFFS" blockers --no-symbolize "$T/p.stacks" | grep '^samples=')
	OFFSAMPLE_PROG='offsample record' perl "$ROOT/tools/lib/offsample-lib.pl" filter --pids 1 < "$BFIX" > "$T/1.stacks"
	run -1 grep '^# blocker: ' "$T/1.stacks"
	assert_equal "$(sed -n 's/^# blockers: //p' "$T/1.stacks")" 0
}

@test "blockers: waits in the kernel (child, cpu, rtmutex) chain through the holder's state at the same ticks" {
	local f=$SFIX/waitfor-drain-6.12.118-rt.txt
	run -0 "$OFFS" blockers --no-symbolize "$f"
	# wf-waitpid waits for its child wf-child, which waits for a mutex
	# its thread wf-child-h holds.
	assert_line --regexp '^samples=69 waiter=380 .* reason=ipc kind=child object=pid holder=381 hname=wf-child hwhat=lock chain=380>381>382 root=382 rname=wf-child-h rwhat=ipc '
	assert_line --regexp '^samples=69 waiter=386 .* kind=child object=any holder=392 hname=wf-kid-a .* chain=386>392 '
	assert_line --regexp '^samples=69 waiter=386 .* kind=child object=any holder=393 hname=wf-kid-b .* chain=386>393 '
	assert_line --regexp '^samples=69 waiter=387 .* kind=child object=pgid holder=388 hname=wf-grp-in '
	assert_line --regexp '^samples=[0-9]+ waiter=403 wcomm=wf-mm wname=wf-mm-wait reason=lock kind=rtmutex object=mmap_lock holder=402 hname=wf-mm-hold '
	# sleep (408) slept while bash waited for it: its one run-queue wait
	# (another record) is not where bash's chain goes.
	assert_line --regexp '^samples=63 waiter=368 .* holder=408 hname=sleep hwhat=sleep chain=368>408 root=408 rname=sleep rwhat=sleep '
	# The run-queue waits: for the thread running on that CPU.
	assert_line --regexp '^samples=[0-9]+ waiter=19 wcomm=rcu_preempt .* reason=sched kind=cpu object=cpu1 holder=403 hname=wf-mm-wait hwhat=cpu chain=19>403 '
}

@test "blockers --dot / --graph: the wait-for graph, threads boxed by process, the deadlock in red, an SVG from Graphviz" {
	run -0 "$OFFS" blockers --dot --no-symbolize "$BFIX"
	assert_line --index 0 'digraph offsample_waits {'
	# The deadlock (blk-dl-x 373 <-> blk-dl-y 374): both nodes and both
	# edges red, and nothing else.
	assert_line --regexp $'^\t"t373" -> "t374" \\[label="mutex [0-9.]+ s", color="#c0392b", '
	assert_line --regexp $'^\t"t374" -> "t373" \\[label="mutex [0-9.]+ s", color="#c0392b", '
	[ "$(grep -c '#c0392b' <<< "$output")" -eq 4 ]
	# The chain a -> b -> c, in blk-main's box; weights in thread-seconds
	# (63 samples at 20 Hz).
	assert_line --regexp $'^\t"t365" -> "t364" \\[label="mutex 3.15 s", color="#1f4e79", '
	assert_line --regexp $'^\t"t364" -> "t363" \\[label="mutex 3.15 s", '
	assert_line $'\tsubgraph "cluster_p360" {'
	assert_line --regexp $'^\t\t"t363" \\[label="blk-chain-c \\(363\\)\\\\nsleep", '
	# --max-edges keeps the heaviest; the title says so.
	run -0 "$OFFS" blockers --dot --max-edges 2 --no-symbolize "$BFIX"
	[ "$(grep -c ' -> ' <<< "$output")" -eq 2 ]
	assert_output --partial '(the 2 heaviest of 9 pairs)'
	run -2 "$OFFS" blockers --dot --folded "$BFIX"
	assert_output --partial '--folded and --dot exclude each other'
	run -2 "$OFFS" blockers -o "$T/x.svg" "$BFIX"
	assert_output --partial '-o goes with --graph'
	# Drawn by Graphviz: a well-formed SVG with a node per thread and an
	# edge per pair (Graphviz's ids are the DOT ids).
	run -0 "$OFFS" blockers --graph -o "$T/w.svg" --no-symbolize "$BFIX"
	run -0 xmllint --noout "$T/w.svg"
	[ "$(grep -c 'class="node"' "$T/w.svg")" -eq 14 ]
	[ "$(grep -c 'class="edge"' "$T/w.svg")" -eq 9 ]
	grep -q 'id="e373_374_mutex"' "$T/w.svg"
	# dot failing: its first line of errors, exit 1, no file written.
	mkdir "$T/bin"
	printf '#!/bin/sh\necho "Error: out of cheese" >&2\nexit 1\n' > "$T/bin/dot"
	chmod +x "$T/bin/dot"
	run -1 env PATH="$T/bin:$PATH" "$OFFS" blockers --graph -o "$T/n.svg" --no-symbolize "$BFIX"
	assert_output 'offsample blockers: dot failed: Error: out of cheese'
	[ ! -e "$T/n.svg" ]
}
