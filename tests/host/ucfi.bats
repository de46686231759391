#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# module/ucfi.c, the .eh_frame -> compact table compiler for user stacks
# without frame pointers, and its unwinder, compiled for user space
# (tests/ucfi/, with AddressSanitizer and UndefinedBehaviorSanitizer): its
# tables agree with readelf -wF (binutils, an independent DWARF reader) at
# every address of Debian's libc, ld.so, libstdc++, bash, perl and programs
# built here; the unwinder finds the same frames as eu-stack (elfutils) in
# live processes built without frame pointers; and hostile input (mutated
# files) never makes the compiler read out of bounds, overflow or leak.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup_file() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	U=$BATS_FILE_TMPDIR
	local cc="gcc -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -I$ROOT/tests/ucfi/shim"
	$cc -o "$U/cfi-dump" "$ROOT/tests/ucfi/cfi-dump.c"
	$cc -o "$U/cfi-fuzz" "$ROOT/tests/ucfi/cfi-fuzz.c"
	$cc -o "$U/cfi-unwind" "$ROOT/tests/ucfi/cfi-unwind.c"
	# Programs of our own, as distributions build them and not.
	gcc -O2 -pthread -o "$U/prog-O2" "$ROOT/tests/workload/offsample-safety.c"
	gcc -O0 -fno-omit-frame-pointer -pthread -o "$U/prog-O0" "$ROOT/tests/workload/offsample-safety.c"
	gcc -O2 -fomit-frame-pointer -pthread -o "$U/prog-nofp" "$ROOT/tests/workload/offsample-ustack.c"
	gcc -O2 -fomit-frame-pointer -pthread -o "$U/wl-nofp" "$ROOT/tests/workload/offsample-workload.c"
	export ROOT U
}

lib() {
	local f
	for f in "/usr/lib/x86_64-linux-gnu/$1" "/lib/x86_64-linux-gnu/$1"; do
		[ -e "$f" ] && { readlink -f "$f"; return; }
	done
	echo "missing $1" >&2
	return 1
}

@test "ucfi: the compiled tables agree with readelf -wF at every address" {
	run -0 "$ROOT/tests/ucfi/cfi-check" "$U/cfi-dump" "$(lib libc.so.6)" \
		"$(lib ld-linux-x86-64.so.2)" "$(lib libstdc++.so.6)" /usr/bin/bash \
		/usr/bin/perl "$U/prog-O2" "$U/prog-O0" "$U/prog-nofp"
	echo "$output"
	refute_output --regexp '[1-9][0-9]* mismatches'
	# Every file gave rows (a compiler that gives nothing agrees with nothing).
	run -0 bash -c "grep -c ' 0 mismatches' <<< \"\$1\"" _ "$output"
	assert_output 8
	refute_output --regexp ': 0 rows'
}

@test "ucfi: libc's table: size, the PLT, and the rules an unwinder needs" {
	run -0 "$U/cfi-dump" -s "$(lib libc.so.6)"
	echo "$output"
	# A few hundred distinct rules, 6 bytes a row: well under libc's own
	# .eh_frame + .eh_frame_hdr.
	read -r _ rows _ rules _ bytes <<< "$output"
	[ "$rules" -lt 1000 ]
	ehsz=$(readelf -SW "$(lib libc.so.6)" | perl -ne '$s += hex $1 if /\.eh_frame(?:_hdr)?\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)/; END { print $s + 0 }')
	echo "table $bytes bytes, .eh_frame + hdr $ehsz bytes"
	[ "$bytes" -lt "$ehsz" ]
	run -0 "$U/cfi-dump" "$(lib libc.so.6)"
	# The PLT's CFA expression is recognised, rbp-based frames (alloca) and
	# saved rbp slots are there, and _start-like ends of the stack too.
	assert_line --regexp '^[0-9a-f]+ plt>=11$'
	assert_line --regexp '^[0-9a-f]+ rbp\+16 c-16$'
	assert_line --regexp '^[0-9a-f]+ rsp\+[0-9]+ c-[0-9]+$'
	assert_line --regexp '^[0-9a-f]+ signal$'
}

@test "ucfi: files without usable CFI are refused with a clear error" {
	run -1 "$U/cfi-dump" "$ROOT/README.md"
	assert_output --partial "Exec format error"
	printf '\177ELF' > "$U/short"
	run -1 "$U/cfi-dump" "$U/short"
	assert_output --partial "Exec format error"
	# An ELF file whose PT_GNU_EH_FRAME header was turned into PT_NULL.
	perl -e 'local $/; open my $f, "<", $ARGV[0] or die; my $d = <$f>;
		my ($phoff, $phentsize, $phnum) = unpack "x32 Q x14 v v", $d;
		for my $i (0 .. $phnum - 1) {
			my $o = $phoff + $i * $phentsize;
			substr($d, $o, 4) = pack "V", 0 if unpack("V", substr($d, $o, 4)) == 0x6474e550;
		}
		print $d' "$U/prog-O2" > "$U/nohdr"
	run -0 bash -c "readelf -lW '$U/nohdr' | grep -c GNU_EH_FRAME || true"
	assert_output 0
	run -1 "$U/cfi-dump" "$U/nohdr"
	assert_output --partial "No such file or directory"
}

teardown() {
	[ -z "${PIDS:-}" ] || kill $PIDS 2>/dev/null || true
	PIDS=
}

@test "ucfi: the unwinder finds eu-stack's frames in processes without frame pointers" {
	local wl sf py pl out
	# Every wait of the workload (libc waits: nanosleep, mutex, pipe, poll,
	# accept, waitpid), a signal handler with an alloca frame, Python
	# threads in a queue, perl.
	"$U/wl-nofp" -n 1 sleep mutex pipe poll accept wait > "$U/wl.out" 2>&1 3>&- &
	wl=$!
	"$U/prog-O2" sigframe > "$U/sf.out" 2>&1 3>&- &
	sf=$!
	python3 -c 'import threading, time, queue
q = queue.Queue()
for i in range(3): threading.Thread(target=q.get, daemon=True).start()
time.sleep(600)' 3>&- &
	py=$!
	perl -e 'sleep 600' 3>&- &
	pl=$!
	PIDS="$wl $sf $py $pl"
	for i in $(seq 50); do grep -q ready "$U/wl.out" && grep -q ready "$U/sf.out" && break; sleep 0.1; done
	sleep 0.5
	run -0 "$ROOT/tests/ucfi/unwind-check" "$U/cfi-unwind" $(pgrep -f "$U/wl-nofp") $sf $py $pl
	echo "$output"
	refute_output --regexp '[1-9][0-9]* differences'
	# Through the signal frame, and far beyond what frame pointers give.
	run -0 bash -c "'$U/cfi-unwind' $sf | grep -c '^#'"
	[ "$output" -ge 12 ]
	run -0 "$ROOT/tests/ucfi/unwind-check" "$U/cfi-unwind" $py
	frames=$(sed -n 's/.* \([0-9]*\) frames, .*/\1/p' <<< "$output")
	fp=$(sed -n 's/.*frame pointers alone: \([0-9]*\).*/\1/p' <<< "$output")
	echo "python3: $frames frames, $fp with frame pointers alone"
	[ "$frames" -ge $((fp * 5)) ]
}

@test "ucfi: only frames a CFI rule found count as CFI frames; code without an FDE goes on with frame pointers" {
	local lib=$U/cfilib.so out tid
	gcc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fPIC -shared -o "$lib" "$ROOT/tests/workload/offsample-cfilib.c"
	gcc -O2 -g -pthread -o "$U/cfihost" "$ROOT/tests/workload/offsample-cfihost.c" -ldl
	"$U/cfihost" "$lib:cfl_nocfi" "$lib" > "$U/cfh.out" 2>&1 3>&- &
	PIDS=$!
	for i in $(seq 50); do grep -q ready "$U/cfh.out" && break; sleep 0.1; done
	sleep 0.3
	run -0 "$U/cfi-unwind" "$PIDS"
	out=$output
	echo "$out"
	# Each waiting thread, by name: frames and its count of CFI frames.
	for name in cfh-0 cfh-1; do
		tid=$(grep -lx "$name" /proc/"$PIDS"/task/*/comm | cut -d/ -f5)
		awk -v t="$tid" '/^TID / { on = ($2 == t ":") } on' <<< "$out" > "$U/$name"
	done
	# cfh-0: read (libc) <- cfl_inner <- cfl_nocfi <- run <- start_thread
	# <- clone3.  cfl_nocfi has no FDE: the step from it to run is taken
	# with its frame pointer, every other with a CFI rule.
	local n0 c0 n1 c1
	n0=$(grep -c '^#' "$U/cfh-0")
	c0=$(sed -n 's/^cfi-frames //p' "$U/cfh-0")
	n1=$(grep -c '^#' "$U/cfh-1")
	c1=$(sed -n 's/^cfi-frames //p' "$U/cfh-1")
	echo "cfh-0: $n0 frames, $c0 by CFI; cfh-1: $n1 frames, $c1 by CFI"
	[ "$n0" -ge 6 ]
	# Every frame but the leaf (the registers) and run (a frame pointer).
	assert_equal "cfh-0 $c0" "cfh-0 $((n0 - 2))"
	# cfh-1 (cfl_outer <- cfl_middle <- cfl_inner): all by CFI.
	assert_equal "cfh-1 $c1" "cfh-1 $((n1 - 1))"
}

@test "ucfi: mutated files never make the compiler misbehave (ASan, UBSan)" {
	local n
	n=$([ "${OFFS_STRESS:-short}" = long ] && echo 200000 || echo 20000)
	run -0 "$U/cfi-fuzz" "$(lib ld-linux-x86-64.so.2)" "$n" 1
	echo "$output"
	assert_output --regexp "^inputs $n built [0-9]+ refused [1-9][0-9]*$"
	run -0 "$U/cfi-fuzz" "$U/prog-O2" "$n" 2
	echo "$output"
	assert_output --regexp "^inputs $n built [1-9][0-9]* refused [1-9][0-9]*$"
}
