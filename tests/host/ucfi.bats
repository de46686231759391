#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# module/ucfi.c, the .eh_frame -> compact table compiler for user stacks
# without frame pointers, and its unwinder, compiled for user space
# (tests/ucfi/, with AddressSanitizer and UndefinedBehaviorSanitizer): its
# tables agree with readelf -wF (binutils, an independent DWARF reader) at
# every address of Debian's libc, ld.so, libstdc++, bash, perl and programs
# built here; the unwinder finds the same frames as eu-stack (elfutils) in
# live processes built without frame pointers; hostile input (mutated
# files) never makes the compiler read out of bounds, overflow or leak;
# and crafted input (tests/workload/offsample-cfibomb.c) never makes it do
# more than work linear in the file (issue 53).

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
	gcc -O2 -Wall -Wextra -Werror -o "$U/bomb" "$ROOT/tests/workload/offsample-cfibomb.c"
	export ROOT U
}

# work FIELD: a field of cfi-dump -w's work line in $output.
work() {
	awk -v f="$1" '$1 == "work" { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' <<< "$output"
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
	assert_output --regexp "^inputs $n built [0-9]+ refused [1-9][0-9]* over 0 maxwork [0-9.]+$"
	run -0 "$U/cfi-fuzz" "$U/prog-O2" "$n" 2
	echo "$output"
	assert_output --regexp "^inputs $n built [1-9][0-9]* refused [1-9][0-9]* over 0 maxwork [0-9.]+$"
}

@test "ucfi: a CIE that does not parse is parsed once, however many FDEs point at it" {
	# 20,000 FDEs of one 4,000-byte CIE that ends in an invalid opcode:
	# 0.5.10 parsed it again for every FDE (it cached only CIEs that
	# parsed), 80 MB of CIE for 80 KB of .eh_frame.
	"$U/bomb" badcie "$U/badcie" 20000 4000
	run -0 "$U/cfi-dump" -w "$U/badcie"
	echo "$output"
	assert_equal "$(work cies)" 1
	[ "$(work bytes)" -le 4000 ]
	assert_line "rows 0"
	# A CIE larger than OFFS_CFI_MAX_CIE (the largest on Debian is 40
	# bytes) is not parsed at all: 1 MiB, 2,000 FDEs (issue 53's file).
	"$U/bomb" badcie "$U/bigcie" 2000 1048576
	run -0 "$U/cfi-dump" -w "$U/bigcie"
	assert_equal "$(work cies)" 0
	assert_equal "$(work bytes)" 0
}

@test "ucfi: FDEs that refer to many CIEs in turn: the cache holds 16, beyond that the work bound stops the build" {
	local eh
	# 16 CIEs in turn: each parsed once, and the table is readelf's.
	"$U/bomb" thrash "$U/thr16" 2000 300 16
	run -0 "$U/cfi-dump" -w "$U/thr16"
	assert_equal "$(work cies)" 16
	assert_equal "$(work over)" 0
	run -0 "$ROOT/tests/ucfi/cfi-check" "$U/cfi-dump" "$U/thr16"
	assert_output --regexp ': 8001 rows, 2000 FDEs, 0 mismatches$'
	# 64 CIEs of 4,000 bytes in turn, 20,000 FDEs: every FDE parses its
	# CIE again, until the bytes interpreted reach 4 times the section
	# plus 1 MiB; the build fails (E2BIG, as for the other bounds).
	"$U/bomb" thrash "$U/thr64" 20000 4000 64
	# What the compiler reads as .eh_frame: up to the end of its PT_LOAD,
	# which in these files runs from the section (at 0x2000) to the end.
	eh=$(( $(stat -c %s "$U/thr64") - 8192 ))
	run -1 "$U/cfi-dump" -w "$U/thr64"
	echo "$output"
	assert_line --partial "thr64: Argument list too long"
	assert_equal "$(work over)" 1
	[ "$(work bytes)" -le $((4 * eh + 1048576 + 4096)) ]
	[ "$(work bytes)" -gt $((4 * eh + 1048576)) ]
	[ "$(work cies)" -lt 20000 ]
}

@test "ucfi: a table near the row bound is sorted and checked as it goes: readelf's rows, a check every 256 steps" {
	# 20,000 FDEs in descending address order: the table is readelf's.
	"$U/bomb" rows "$U/rows20k" 20000
	run -0 "$ROOT/tests/ucfi/cfi-check" "$U/cfi-dump" "$U/rows20k"
	assert_output --regexp ': 80001 rows, 20000 FDEs, 0 mismatches$'
	# 800,000 FDEs, 4 million rows before merging: the records and the
	# heap sort (about 1.5 steps a row) each count a step; the module lets
	# the scheduler in and looks at its budget at every check.
	"$U/bomb" rows "$U/rows800k"
	run -0 "$U/cfi-dump" -w "$U/rows800k"
	echo "$output"
	assert_line "rows 3200001"
	[ "$(work checks)" -ge $(( (800000 + 4000000 * 3 / 2) / 256 - 10 )) ]
	# A check that says stop (the module's, past cfi_build_ms or on
	# rmmod) ends the build at once with its error.
	CFI_DUMP_STOP_AFTER=7 run -1 "$U/cfi-dump" -w "$U/rows800k"
	assert_line --partial "rows800k: Timer expired"
	assert_equal "$(work checks)" 7
}

@test "ucfi: rules a hash of their low bits would put in one slot: a few probes a lookup, and checks inside one record" {
	# One FDE: 65,000 rules whose CFA offsets differ above bit 17 and
	# rbp offsets above bit 2 (0.5.10's hash put them all in one slot:
	# 22 s for this file with 100,000 lookups that add no row), then
	# 100,000 advances by 0.
	"$U/bomb" rules "$U/rules" 65000 100000
	run -0 "$U/cfi-dump" -w "$U/rules"
	echo "$output"
	assert_line "rows 65001"
	[ "$(work lookups)" -ge 165000 ]
	[ "$(work probes)" -le $(( 4 * $(work lookups) )) ]
	# Every call-frame instruction is a step: 295,000 in this one record.
	[ "$(work checks)" -ge $(( 295000 / 256 )) ]
}

@test "ucfi: the fuzzer's crafted shapes: mutated, they stay within the work bound (ASan, UBSan)" {
	local n
	n=$([ "${OFFS_STRESS:-short}" = long ] && echo 20000 || echo 2000)
	"$U/bomb" badcie "$U/fz-badcie" 2000 3000
	"$U/bomb" thrash "$U/fz-thrash" 2000 1000 20
	"$U/bomb" rows "$U/fz-rows" 2000
	"$U/bomb" fine "$U/fz-fine" 64
	"$U/bomb" rules "$U/fz-rules" 2000 1000
	# Most mutants of thrash run into the work bound, each after about
	# 1 MiB of CIEs (26 ms under ASan): a tenth as many inputs.
	run -0 "$U/cfi-fuzz" "$U/fz-thrash" $((n / 10)) 11
	echo "$output"
	assert_output --regexp "^inputs $((n / 10)) built [0-9]+ refused [1-9][0-9]* over [1-9][0-9]* maxwork [0-9.]+$"
	for f in badcie rows rules fine; do
		run -0 "$U/cfi-fuzz" "$U/fz-$f" "$n" 12
		echo "$f: $output"
		assert_output --regexp "^inputs $n built [1-9][0-9]* refused [0-9]+ over [0-9]+ maxwork [0-9.]+$"
	done
}
