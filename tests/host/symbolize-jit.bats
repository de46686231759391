#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# JIT frames: offsample-symbolize names [anon]+0xADDRESS frames from the
# runtimes' perf maps (/tmp/perf-PID.map) and jitdump files (jit-PID.dump)
# of running processes, through their root and pid namespace, and from the
# "# jit:" lines that offsample record and snapshot keep.  Parsers are
# tested with maps and jitdumps written here (a small C program stands in
# for a runtime: it maps a jitdump as runtimes do); then the real
# runtimes of this host (OpenJDK, Node.js, CPython 3.12), compared with
# what perf names from the same maps where perf can sample here.
#
#   bats tests/host/symbolize-jit.bats

load tools-common

SYM=$ROOT/tools/offsample-symbolize

setup_file() {
	local d=$BATS_FILE_TMPDIR
	# A stand-in for a runtime: for each DUMP DIR, it moves DUMP to
	# DIR/jit-PID.dump (PID as its own pid namespace numbers it) and maps
	# its first page executable, as V8 and CPython do for perf; then it
	# says "ready" and sleeps.
	cat > "$d/jitproc.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		char p[4096];
		int fd;
		snprintf(p, sizeof(p), "%s/jit-%d.dump", argv[i + 1], (int)getpid());
		if (rename(argv[i], p) || (fd = open(p, O_RDONLY)) < 0 ||
		    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror(p);
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sleep(300);
	return 0;
}
EOF
	gcc -O1 -o "$d/jitproc" "$d/jitproc.c"
	# gen-jitdump OUT ORDER SPEC...: a jitdump file in byte order ORDER
	# ("<" little, ">" big endian), elf_mach 0 and a junk reserved word
	# as CPython 3.13.0 writes them, then one record per SPEC:
	#   load:ADDR:SIZE:INDEX:NAME   move:OLD:NEW:SIZE:INDEX
	#   debug:ADDR   unwind   cut (the next record is written half)
	#   pad:N (N records of 16 bytes, of a kind readers skip)
	cat > "$d/gen-jitdump" <<'EOF'
#!/usr/bin/perl
use strict;
use warnings;
no warnings 'portable';
my ($out, $e, @spec) = @ARGV;
open(my $fh, '>:raw', $out) or die "$out: $!\n";
print $fh pack("L$e L$e L$e L$e L$e L$e Q$e Q$e", 0x4A695444, 1, 40, 0, 0x1a1a1a1a, 4242, 1, 0);
my ($ts, $cut) = (100, 0);
for (@spec) {
	my ($k, @a) = split /:/, $_, 5;
	my ($id, $body);
	if ($k eq 'cut') { $cut = 1; next; }
	if ($k eq 'pad') { print $fh pack("L$e L$e Q$e", 3, 16, $ts++) x $a[0]; next; }
	if ($k eq 'load') {
		my ($addr, $size, $idx, $name) = (hex $a[0], hex $a[1], $a[2], $a[3]);
		($id, $body) = (0, pack("L$e L$e Q$e Q$e Q$e Q$e", 4242, 4243, $addr, $addr, $size, $idx) . "$name\0" . ("\xcc" x $size));
	} elsif ($k eq 'move') {
		my ($old, $new, $size, $idx) = (hex $a[0], hex $a[1], hex $a[2], $a[3]);
		($id, $body) = (1, pack("L$e L$e Q$e Q$e Q$e Q$e Q$e", 4242, 4243, $new, $old, $new, $size, $idx));
	} elsif ($k eq 'debug') {
		($id, $body) = (2, pack("Q$e Q$e Q$e l$e l$e", hex $a[0], 1, hex $a[0], 7, 0) . "x.js\0");
	} elsif ($k eq 'unwind') {
		($id, $body) = (4, pack("Q$e Q$e Q$e", 16, 8, 16) . ("\0" x 16));
	}
	my $rec = pack("L$e L$e Q$e", $id, 16 + length $body, $ts++) . $body;
	$rec = substr($rec, 0, length($rec) / 2) if $cut;
	print $fh $rec;
	last if $cut;
}
close $fh or die "$out: $!\n";
EOF
	chmod +x "$d/gen-jitdump"
}

setup() {
	T=$BATS_TEST_TMPDIR
	JP=$BATS_FILE_TMPDIR/jitproc
	GEN=$BATS_FILE_TMPDIR/gen-jitdump
	export OFFSAMPLE_CACHE_DIR=$T/cache
	PIDS=() KPIDS=() RM=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	# The init of a pid namespace ignores SIGTERM from outside.
	for p in "${KPIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	[ ${#RM[@]} -eq 0 ] || rm -rf -- "${RM[@]}"
}

# start NAME [ARGS...]: jitproc as a process named NAME (its comm), in
# the background; PID is its pid once it said "ready".
start() {
	[ -e "$T/$1" ] || cp "$JP" "$T/$1"
	"$T/$1" "${@:2}" > "$T/$1.out" 2>&1 &
	PID=$!
	PIDS+=("$PID")
	RM+=("/tmp/perf-$PID.map")
	waitfor grep -q '^ready' "$T/$1.out"
}
# waitfor CMD...: poll up to 30 s.
waitfor() {
	local i
	for i in $(seq 1 300); do
		"$@" && return 0
		sleep 0.1
	done
	echo "timed out: $*" >&2
	return 1
}
# permap PID: write stdin to /tmp/perf-PID.map (PID: one start() started,
# which has the map removed after the test).
permap() {
	cat > "/tmp/perf-$1.map"
}
# stacks OUT [KEY]: a drain of this host, ended now, with one record per
# line of stdin, "COMM<TAB>PID<TAB>USTACK" (PID "-" without key pid).
stacks() {
	local out=$1 key=${2:-comm} now c p u
	now=$(date +%s)
	{
		printf '%s\n' '# offsample stacks v3' '# source: drain' '# version: 0.6.2' \
			"# hostname: $(uname -n)" '# generation: 5' "# start: $((now - 5)).000" \
			"# end: $now.500" '# duration: 5.500' '# hz: 19' '# ticks: 100' '# samples: 0' \
			'# dropped: 0' '# records: 0' "# key: $key" \
			'# columns: count reason state pid tid comm tname kstack ustack wobj cgroup critical'
		while IFS=$'\t' read -r c p u; do
			printf '3\tsleep\tS\t%s\t-\t%s\t-\tschedule+0x5a/0xd0;do_nanosleep+0x7b/0x140\t%s\tclock_nanosleep\t/\t0\n' "$p" "$c" "$u"
		done
	} > "$out"
	"$BATS_TEST_DIRNAME/../lib/restamp-stacks" "$out"
}
ustacks() { awk -F'\t' '!/^#/ { print $9 }' "$@"; }

@test "perf map: with and without 0x, spaces in names, escapes, the later entry wins, junk and a cut last line skipped" {
	start osj-map
	printf '%s\n' '0x1000 0x100 with_0x' '2000 100 no_0x' '3000 80 long Hot.work(int)' \
		'4000 40 semi;colon\back' 'garbage line' '5000 0 zero_size' '6000' \
		'2080 10 later_wins' '00007000 0000000000000020 JS:*work /srv/app.js:1:14' '0 10 at_zero' |
		permap "$PID"
	printf '8000 100 cut_while_writ' >> "/tmp/perf-$PID.map"
	stacks "$T/in" <<-EOF
	osj-map	-	[anon]+0x1010;[anon]+0x2001;[anon]+0x3050;[anon]+0x2085;[anon]+0x7020
	osj-map	-	[anon]+0x4000;[anon]+0x5000;[anon]+0x8010;[anon]+0x9999;[anon]+0x1000;[anon]+0x10
	EOF
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	run -0 ustacks <<< "$output"
	# Leaf at its address, callers at address - 1 (0x2001 is no_0x+0x1;
	# 0x1000 as a caller is before with_0x; 0x7020 is past JS:*work's
	# end as a leaf, inside it as a caller).
	assert_line --index 0 'with_0x+0x10 ([jit]);no_0x+0x1 ([jit]);long Hot.work(int)+0x50 ([jit]);later_wins+0x5 ([jit]);JS:*work /srv/app.js:1:14+0x20 ([jit])'
	assert_line --index 1 'semi\x3bcolon\x5cback+0x0 ([jit]);[anon]+0x5000;[anon]+0x8010;[anon]+0x9999;[anon]+0x1000;[anon]+0x10'
	# Symbolizing twice is once.
	"$SYM" "$T/in" > "$T/once"
	run -0 "$SYM" "$T/once"
	assert_equal "$output" "$(cat "$T/once")"
	# The line becomes whole: it names its frame.
	echo 'ing' >> "/tmp/perf-$PID.map"
	run -0 "$SYM" "$T/in"
	assert_output --partial ';cut_while_writing+0x10 ([jit]);'
}

@test "perf map being appended while it is read: no error, the whole lines name their frames" {
	start osj-grow
	local i
	for i in $(seq 1 200); do printf '%x 10 f%d\n' $((0x100000 + i * 16)) "$i"; done | permap "$PID"
	# A writer that appends lines in two pieces, as fast as it can.
	perl -e 'open(my $f, ">>", $ARGV[0]) or die; select $f; $| = 1;
		for my $i (201 .. 1e9) { printf "%x 10 f", 0x100000 + $i * 16;
			select(undef, undef, undef, 0.001); print "$i\n"; }' "/tmp/perf-$PID.map" &
	local w=$!
	stacks "$T/in" <<< $'osj-grow\t-\t[anon]+0x100015;[anon]+0x100c85'
	for i in $(seq 1 15); do
		run --separate-stderr "$SYM" "$T/in"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" 'f1+0x5 ([jit]);f200+0x5 ([jit])'
	done
	kill "$w"
	wait "$w" 2>/dev/null || true
	[ "$(wc -l < "/tmp/perf-$PID.map")" -gt 300 ] || false
}

@test "jitdump, both byte orders: code load and move, debug and unwinding records skipped, a cut last record, found as the process maps it" {
	local e
	for e in '<' '>'; do
		"$GEN" "$T/src.dump" "$e" load:10000:100:1:'JS:*alpha /x.js:1:1' debug:10000 unwind \
			load:20000:80:2:'py::beta:/y.py' move:20000:30000:80:2 load:40000:40:3:'gamma;semi\back' \
			load:20000:20:4:reused cut load:50000:40:5:delta_cut
		start osj-dump "$T/src.dump" "$T"
		[ -e "$T/jit-$PID.dump" ] || false
		run -0 grep -c "jit-$PID.dump" "/proc/$PID/maps"
		stacks "$T/in" <<< $'osj-dump\t-\t[anon]+0x10010;[anon]+0x30011;[anon]+0x20019;[anon]+0x40001;[anon]+0x20025;[anon]+0x50000;[anon]+0x60000'
		run --separate-stderr "$SYM" "$T/in"
		assert_success
		assert_equal "$stderr" ""
		# The move ended beta's old range: 0x20025 (a caller, looked up
		# at 0x20024) is past "reused"; delta_cut was never written whole.
		assert_equal "$(ustacks <<< "$output")" 'JS:*alpha /x.js:1:1+0x10 ([jit]);py::beta:/y.py+0x11 ([jit]);reused+0x19 ([jit]);gamma\x3bsemi\x5cback+0x1 ([jit]);[anon]+0x20025;[anon]+0x50000;[anon]+0x60000'
		kill "$PID"
		wait "$PID" 2>/dev/null || true
		rm -f "$T/jit-$PID.dump"
	done
}

@test "jitdump: a damaged or foreign file is no error; the records before the damage still name" {
	# A record whose size is below its own header: reading stops there.
	"$GEN" "$T/src.dump" '<' load:10000:100:1:first
	printf '\0\0\0\0\4\0\0\0' >> "$T/src.dump"
	"$GEN" "$T/tail.dump" '<' load:20000:100:2:after
	tail -c +41 "$T/tail.dump" >> "$T/src.dump"
	start osj-bad "$T/src.dump" "$T"
	stacks "$T/in" <<< $'osj-bad\t-\t[anon]+0x10010;[anon]+0x20011'
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" 'first+0x10 ([jit]);[anon]+0x20011'
	# Not a jitdump at all (another magic).
	head -c 4096 /dev/urandom > "$T/junk.dump"
	start osj-junk "$T/junk.dump" "$T"
	stacks "$T/in2" <<< $'osj-junk\t-\t[anon]+0x10010'
	run --separate-stderr "$SYM" "$T/in2"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x10010'
}

@test "a process in its own pid and mount namespaces: /proc/PID/root/tmp/perf-NSPID.map and its jit-NSPID.dump" {
	command -v unshare > /dev/null || skip "no unshare"
	unshare --pid --fork --mount true 2> /dev/null || skip "namespaces not allowed here"
	[ ! -e /tmp/perf-1.map ] || skip "/tmp/perf-1.map exists on this host"
	local ns=$T/nstmp
	mkdir -p "$ns"
	cp "$JP" "$ns/osj-ns"
	printf '%s\n' '7f0000001000 100 inside_container' > "$ns/perf-1.map"
	"$GEN" "$ns/src.dump" '<' load:7f0000002000:100:1:from_jitdump
	# $ns becomes the process's /tmp, where it is pid 1.
	unshare --pid --fork --kill-child --mount --mount-proc sh -c \
		'mount --bind "$1" /tmp && exec /tmp/osj-ns /tmp/src.dump /tmp' sh "$ns" > "$T/ns.out" 2>&1 &
	PIDS+=($!)
	waitfor grep -q '^ready 1$' "$T/ns.out"
	local pid
	pid=$(pgrep -x osj-ns | while read -r p; do [ "$(awk '$1 == "NStgid:" { print $NF }' "/proc/$p/status")" = 1 ] && echo "$p"; done | head -n1)
	[ -n "$pid" ] || false
	KPIDS+=("$pid")
	run -0 grep '^NStgid:' "/proc/$pid/status"
	assert_output --regexp "^NStgid:[[:space:]]+$pid[[:space:]]+1\$"
	# Neither file is where a reader in our namespace would look.
	[ ! -e "/tmp/perf-$pid.map" ] && [ ! -e /tmp/perf-1.map ] && [ ! -e "/tmp/jit-$pid.dump" ] || false
	stacks "$T/in" <<< $'osj-ns\t-\t[anon]+0x7f0000001010;[anon]+0x7f0000002021'
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" 'inside_container+0x10 ([jit]);from_jitdump+0x21 ([jit])'
}

@test "processes of one name: named where their maps agree; key pid picks one; other hosts, later processes, --no-live-jit: not named" {
	start osj-two
	local a=$PID
	printf '%s\n' '10000 100 same_in_both' '20000 100 only_in_a' '30000 100 differs_a' | permap "$a"
	start osj-two
	local b=$PID
	printf '%s\n' '10000 100 same_in_both' '30000 100 differs_b' | permap "$b"
	local u='[anon]+0x10010;[anon]+0x20010;[anon]+0x30010'
	stacks "$T/in" <<< "osj-two	-	$u"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" 'same_in_both+0x10 ([jit]);only_in_a+0x10 ([jit]);[anon]+0x30010'
	# With a pid column, that process alone.
	stacks "$T/inp" comm,pid <<< "osj-two	$a	$u
osj-two	$b	$u"
	run -0 "$SYM" "$T/inp"
	assert_equal "$(ustacks <<< "$output")" "same_in_both+0x10 ([jit]);only_in_a+0x10 ([jit]);differs_a+0x10 ([jit])
same_in_both+0x10 ([jit]);[anon]+0x20010;differs_b+0x10 ([jit])"
	# A pid that now belongs to a process of another name: not used.
	stacks "$T/inx" comm,pid <<< "osj-other	$a	$u"
	run -0 "$SYM" "$T/inx"
	assert_equal "$(ustacks <<< "$output")" "$u"
	# Recorded on another host, or before these processes started: the
	# running processes are not the ones sampled.
	sed 's/^# hostname: .*/# hostname: elsewhere/' "$T/in" > "$T/host"
	run -0 "$SYM" "$T/host"
	assert_equal "$(ustacks <<< "$output")" "$u"
	sed 's/^# end: .*/# end: 1700000000.000/' "$T/in" > "$T/old"
	run -0 "$SYM" "$T/old"
	assert_equal "$(ustacks <<< "$output")" "$u"
	run -0 "$SYM" --no-live-jit "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$u"
	run -0 "$SYM" --help
	assert_output --partial '--no-live-jit'
}

@test "# jit: lines: preferred to the running processes' maps, used without them, escapes kept; an unknown version is ignored" {
	start osj-hdr
	printf '%s\n' '10000 100 live_name' '20000 100 live_only' | permap "$PID"
	stacks "$T/in" <<< "osj-hdr	-	[anon]+0x10010;[anon]+0x20010;[anon]+0x30010"
	sed "/^# columns:/i # jit-maps: v1 entries=2 processes=1\\
# jit: pid=$PID comm=osj-hdr start=0x10000 size=0x100 src=perf-map name=recorded name(int)\\
# jit: pid=$PID comm=osj-hdr start=0x30000 size=0x8 future=1 src=jitdump name=a\\\\x3bb\\\\x5cc" "$T/in" > "$T/cap"
	run -0 grep -c '^# jit: ' "$T/cap"
	run --separate-stderr "$SYM" "$T/cap"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" 'recorded name(int)+0x10 ([jit]);live_only+0x10 ([jit]);[anon]+0x30010'
	"$SYM" "$T/cap" > "$T/once"
	run -0 grep -c '^# jit: ' "$T/once"
	assert_output 2
	run -0 "$SYM" "$T/once"
	assert_equal "$output" "$(cat "$T/once")"
	# The process gone: the lines alone.
	kill "$PID"
	rm "/tmp/perf-$PID.map"
	sed 's/^\(# jit: .*start=0x30000 size=\)0x8/\10x100/' "$T/cap" > "$T/cap2"
	run -0 "$SYM" "$T/cap2"
	assert_equal "$(ustacks <<< "$output")" 'recorded name(int)+0x10 ([jit]);[anon]+0x20010;a\x3bb\x5cc+0x10 ([jit])'
	# A layout this reader does not know: its lines are not used.
	sed 's/^# jit-maps: v1/# jit-maps: v2/' "$T/cap2" > "$T/v2"
	run -0 "$SYM" "$T/v2"
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x10010;[anon]+0x20010;[anon]+0x30010'
	# Junk lines are skipped; the reading commands take such a file.
	sed '/^# columns:/i # jit: pid=x comm=y start=zz name=\
# jit: nonsense' "$T/cap2" > "$T/junk"
	run -0 "$SYM" "$T/junk"
	assert_equal "$(ustacks <<< "$output")" 'recorded name(int)+0x10 ([jit]);[anon]+0x20010;a\x3bb\x5cc+0x10 ([jit])'
	run -0 "$OFFS" collapse --user-only "$T/cap2"
	assert_output 'sleep;osj-hdr;a\x3bb\x5cc;[anon];recorded name(int) 3'
	run -0 "$OFFS" collapse --user-only --dso --offsets "$T/cap2"
	assert_output 'sleep;osj-hdr;a\x3bb\x5cc+0x10 ([jit]);[anon]+0x20010;recorded name(int)+0x10 ([jit]) 3'
}

@test "record and snapshot keep the map entries the recording's [anon] frames fall in; named after the process is gone" {
	start osj-rec
	printf '%s\n' '7f0000010000 100 long Rec.hot(int)' '7f0000020000 100 JS:*other' '7f0000030000 10 not_sampled' | permap "$PID"
	stacks "$T/drain" <<< "osj-rec	-	[anon]+0x7f0000010020;[anon]+0x7f0000020001;[anon]+0x7f0000099999;/nonexistent/libosj.so+0x10
osj-none	-	[anon]+0x7f0000010020"
	fake_tree "$T/drain"
	run --separate-stderr "$OFFS" record -d 0.2 -o "$T/rec.stacks"
	assert_success
	assert_equal "$stderr" ""
	run -0 grep '^# jit' "$T/rec.stacks"
	assert_output "# jit-maps: v1 entries=2 processes=1
# jit: pid=$PID comm=osj-rec start=0x7f0000010000 size=0x100 src=perf-map name=long Rec.hot(int)
# jit: pid=$PID comm=osj-rec start=0x7f0000020000 size=0x100 src=perf-map name=JS:*other"
	# Before "# columns:"; the records are the drain's; the file is whole.
	run -0 grep -n '^# jit-maps:\|^# columns:' "$T/rec.stacks"
	assert_equal "$(cut -d: -f2- <<< "${lines[1]}")" "# columns: count reason state pid tid comm tname kstack ustack wobj cgroup critical"
	assert_equal "$(grep -v '^#' "$T/rec.stacks")" "$(grep -v '^#' "$T/drain")"
	run -0 perl "$ROOT/tools/lib/offsample-lib.pl" check rec "$T/rec.stacks"
	# A snapshot keeps them too.
	mkdir "$T/snaps"
	run -0 "$OFFS" snapshot "$T/snaps"
	run -0 grep -h '^# jit' "$T"/snaps/offsample-*.stacks
	assert_line --index 0 "# jit-maps: v1 entries=2 processes=1"
	assert_equal "${#lines[@]}" 3
	run -0 ls -A "$T/snaps"
	assert_equal "${#lines[@]}" 1
	# The next day: the process and its map are gone.
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	rm "/tmp/perf-$PID.map"
	run -0 "$SYM" "$T/rec.stacks"
	assert_equal "$(ustacks <<< "$output" | head -n1 | cut -d';' -f1-3)" 'long Rec.hot(int)+0x20 ([jit]);JS:*other+0x1 ([jit]);[anon]+0x7f0000099999'
	run -0 "$SYM" "$T"/snaps/offsample-*.stacks
	assert_equal "$(ustacks <<< "$output" | head -n1 | cut -d';' -f1-2)" 'long Rec.hot(int)+0x20 ([jit]);JS:*other+0x1 ([jit])'
	# The reading commands name them by themselves.
	run -0 "$OFFS" collapse --user-only "$T/rec.stacks"
	assert_line 'sleep;osj-rec;libosj.so+0x10 (missing);[anon];JS:*other;long Rec.hot(int) 3'
	assert_line 'sleep;osj-none;[anon] 3'
	# A drain without [anon] frames is written as it was.
	fake_tree
	run -0 "$OFFS" record -d 0.1 -o "$T/plain.stacks"
	run -1 grep -c '^# jit' "$T/plain.stacks"
	assert_equal "$(grep -v '^# recorded-by' "$T/plain.stacks")" "$(cat "$SMALL")"
	run -0 ls -A "$T"
	refute_output --partial '.offsample-'
}

@test "record with key pid: the recorded process's entries only; a process gone before the end leaves its map in /tmp" {
	start osj-pid
	local a=$PID
	printf '%s\n' '7f0000010000 100 from_a' | permap "$a"
	start osj-pid
	local b=$PID
	printf '%s\n' '7f0000010000 100 from_b' | permap "$b"
	stacks "$T/drain" comm,pid <<< "osj-pid	$a	[anon]+0x7f0000010020"
	fake_tree "$T/drain"
	run -0 "$OFFS" record -d 0.1 -o "$T/rec.stacks"
	run -0 grep '^# jit: ' "$T/rec.stacks"
	assert_output "# jit: pid=$a comm=osj-pid start=0x7f0000010000 size=0x100 src=perf-map name=from_a"
	# Exited, its map left behind (as perf report reads it).
	kill "$a"
	wait "$a" 2>/dev/null || true
	run -0 "$OFFS" record -d 0.1 -o "$T/rec2.stacks"
	run -0 grep '^# jit: ' "$T/rec2.stacks"
	assert_output "# jit: pid=$a comm=osj-pid start=0x7f0000010000 size=0x100 src=perf-map name=from_a"
}

# --------------------------------------------------------- real runtimes

# perf_names PID: "ADDRESS NAME" of each frame perf samples in PID's
# JIT code (perf's own reading of /tmp/perf-PID.map), or skip.
perf_names() {
	command -v perf > /dev/null || skip "perf not installed"
	perf record -q -e cpu-clock -F 499 -g -p "$1" -o "$T/perf.data" -- sleep 1 > /dev/null 2>&1 ||
		skip "perf record cannot sample here (perf_event_open refused)"
	perf script -i "$T/perf.data" -F ip,sym,dso 2> /dev/null |
		awk -v m="(/tmp/perf-$1.map)" '$NF == m && $2 != "[unknown]" { ip = $1; $1 = ""; $NF = ""; sub(/^ /, ""); sub(/ $/, ""); print ip, $0 }' |
		sort -u > "$T/perf-names"
	[ -s "$T/perf-names" ] || skip "perf sampled no JIT frame"
}
# compare_perf COMM PID: each address perf named, symbolized as a leaf
# of process COMM, gets perf's name.
compare_perf() {
	local ip name
	while read -r ip name; do printf '%s\t-\t[anon]+0x%s\n' "$1" "$ip"; done < "$T/perf-names" | stacks "$T/pin"
	"$SYM" "$T/pin" | ustacks | sed 's/+0x[0-9a-f]* (\[jit\])$//' > "$T/our-names"
	cut -d' ' -f2- "$T/perf-names" | diff - "$T/our-names"
}

@test "OpenJDK: a compiled hot method named from jcmd Compiler.perfmap, as perf report names it" {
	command -v java > /dev/null && command -v javac > /dev/null && command -v jcmd > /dev/null || skip "no JDK"
	mkdir "$T/j"
	cat > "$T/j/Hot.java" <<'EOF'
public class Hot {
    static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += i ^ (s >>> 3); return s; }
    public static void main(String[] a) throws Exception {
        long t = 0;
        for (int i = 0; i < 20000; i++) t += work(1000);
        System.out.println("ready");
        System.out.flush();
        for (;;) t += work(100000) + (t == 42 ? 1 : 0);
    }
}
EOF
	javac -d "$T/j" "$T/j/Hot.java"
	java -XX:+PreserveFramePointer -cp "$T/j" Hot > "$T/j/out" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	RM+=("/tmp/perf-$pid.map")
	waitfor grep -q ready "$T/j/out"
	run -0 jcmd "$pid" Compiler.perfmap
	run -0 grep -m1 ' long Hot.work(int)$' "/tmp/perf-$pid.map"
	local start
	start=${output%% *}
	stacks "$T/in" <<< "java	-	[anon]+$(printf '0x%x' $((start + 0x10)));[anon]+$(printf '0x%x' $((start + 0x21)))"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" 'long Hot.work(int)+0x10 ([jit]);long Hot.work(int)+0x21 ([jit])'
	# The same addresses perf samples, named as perf names them.
	perf_names "$pid"
	run -0 grep -c ' long Hot.work(int)$' "$T/perf-names"
	run -0 compare_perf java "$pid"
}

@test "Node.js --perf-basic-prof: the hot JavaScript function, as perf names it; --perf-prof: the same from its jitdump" {
	command -v node > /dev/null || skip "no node"
	mkdir "$T/n"
	cat > "$T/n/hot.js" <<'EOF'
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i ^ (s >>> 3); return s; }
let t = 0; for (let i = 0; i < 20000; i++) t += work(1000);
for (let k = 0; k < 200; k++) { const f = new Function('n', 'let s=0;for(let i=0;i<n;i++)s+=i^' + k + ';return s'); for (let j = 0; j < 300; j++) t += f(200); }
console.log('ready');
if (process.argv[2] === 'spin') for (;;) t += work(100000) + (t === 42 ? 1 : 0);
setTimeout(() => {}, 300000);
EOF
	(cd "$T/n" && exec node --perf-basic-prof hot.js spin > out 2>&1) &
	local pid=$!
	PIDS+=("$pid")
	RM+=("/tmp/perf-$pid.map")
	waitfor grep -q ready "$T/n/out"
	run -0 grep -m1 " JS:\*work $T/n/hot.js:1:14\$" "/tmp/perf-$pid.map"
	local start
	start=0x${output%% *}
	stacks "$T/in" <<< "node	-	[anon]+$(printf '0x%x' $((start + 0x8)))"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "JS:*work $T/n/hot.js:1:14+0x8 ([jit])"
	perf_names "$pid"
	run -0 grep -c " JS:\*work $T/n/hot.js:1:14\$" "$T/perf-names"
	run -0 compare_perf node "$pid"
	kill "$pid"
	# --perf-prof writes a jitdump in its working directory; both at once
	# give the addresses from the text map, the names from the jitdump
	# alone once the map is removed.
	mkdir "$T/nd"
	(cd "$T/nd" && exec node --perf-prof --perf-basic-prof ../n/hot.js > out 2>&1) &
	pid=$!
	PIDS+=("$pid")
	RM+=("/tmp/perf-$pid.map")
	waitfor grep -q ready "$T/nd/out"
	run -0 grep -c "jit-$pid.dump" "/proc/$pid/maps"
	run -0 grep " JS:\*work $T/n/hot.js:1:14\$" "/tmp/perf-$pid.map"
	start=0x${lines[0]%% *}
	rm "/tmp/perf-$pid.map"
	stacks "$T/in" comm,pid <<< "node	$pid	[anon]+$(printf '0x%x' $((start + 0x8)))"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "JS:*work $T/n/hot.js:1:14+0x8 ([jit])"
}

@test "CPython 3.12 -X perf: py:: trampolines named" {
	local py
	for py in "$(command -v python3.12 || true)" /root/.pyenv/versions/3.12*/bin/python3.12; do
		[ -x "$py" ] && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2> /dev/null && break
		py=
	done
	[ -n "$py" ] || skip "no python3.12"
	cat > "$T/pf.py" <<'EOF'
import time
def inner_fn(n):
    s = 0
    for i in range(n): s += i ^ (s >> 3)
    return s
t = sum(inner_fn(100) for _ in range(100))
print("ready", flush=True)
time.sleep(300)
EOF
	"$py" -X perf "$T/pf.py" > "$T/py.out" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	RM+=("/tmp/perf-$pid.map")
	waitfor grep -q ready "$T/py.out"
	run -0 grep -m1 " py::inner_fn:$T/pf.py\$" "/tmp/perf-$pid.map"
	local start comm
	start=0x${output%% *}
	comm=$(cat "/proc/$pid/comm")
	stacks "$T/in" <<< "$comm	-	[anon]+$(printf '0x%x' $((start + 4)))"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "py::inner_fn:$T/pf.py+0x4 ([jit])"
}

@test "a map owned by another user than the process's or root is not used (as perf), nor a link or a FIFO at its name; the process's user's own map is" {
	[ "$(id -u)" = 0 ] || skip "needs root (files and a process of another user)"
	start osj-own
	echo '1000 100 mine' | permap "$PID"
	stacks "$T/in" 'comm,pid' <<< "osj-own	$PID	[anon]+0x1010"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" 'mine+0x10 ([jit])'
	# Left there by another user: not used, said once.
	chown 65534 "/tmp/perf-$PID.map"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x1010'
	assert_equal "$stderr" "offsample-symbolize: /proc/$PID/root/tmp/perf-$PID.map: owned by user 65534, not by the process's user or root; not used"
	# A link to a good map, a FIFO: not used, no hang.
	echo '1000 100 linked' > "$T/linked.map"
	rm "/tmp/perf-$PID.map"
	ln -s "$T/linked.map" "/tmp/perf-$PID.map"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x1010'
	rm "/tmp/perf-$PID.map"
	mkfifo "/tmp/perf-$PID.map"
	run -0 timeout 30 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x1010'
	rm "/tmp/perf-$PID.map"
	# A process of user 65534 with its own map.
	setpriv --reuid=65534 --regid=65534 --clear-groups sleep 300 &
	local n=$!
	PIDS+=("$n")
	RM+=("/tmp/perf-$n.map")
	waitfor grep -q '^Uid:[[:space:]]*65534' "/proc/$n/status"
	echo '2000 100 nobodys' > "/tmp/perf-$n.map"
	chown 65534 "/tmp/perf-$n.map"
	stacks "$T/in2" 'comm,pid' <<< "sleep	$n	[anon]+0x2010"
	run --separate-stderr "$SYM" "$T/in2"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" 'nobodys+0x10 ([jit])'
}

@test "a perf map larger than 64 MiB: its last 64 MiB read; more than 262144 entries: the last ones kept; each said once" {
	start osj-huge
	# 340,000 lines of about 210 bytes: 68 MiB.
	perl -e 'my $pad = "x" x 190; printf "%x 10 f%d_%s\n", 0x10000000 + $_ * 16, $_, $pad for 0 .. 339999' |
		permap "$PID"
	[ "$(stat -c %s "/tmp/perf-$PID.map")" -gt $((64 << 20)) ] || false
	local first=$((340000 - 262144)) a
	a() { printf '[anon]+0x%x' $((0x10000000 + $1 * 16 + 5)); }
	stacks "$T/in" <<< "osj-huge	-	$(a 0);$(a $((first - 1)));$(a "$first");$(a 339999)"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	local pad
	pad=$(printf 'x%.0s' $(seq 190))
	assert_equal "$(ustacks <<< "$output")" "$(a 0);$(a $((first - 1)));f${first}_$pad+0x5 ([jit]);f339999_$pad+0x5 ([jit])"
	assert_equal "$stderr" "offsample-symbolize: /proc/$PID/root/tmp/perf-$PID.map: larger than 64 MiB; only its last 64 MiB read
offsample-symbolize: /proc/$PID/root/tmp/perf-$PID.map: more than 262144 entries; the earliest left out"
}

@test "a perf map that grows while it is read (sparse, without end) is read as it was opened; lines longer than 64 KiB are skipped" {
	start osj-sparse
	{ printf '1000 100 short\n2000 100 '; head -c 70000 /dev/zero | tr '\0' a; printf '\n3000 100 after\n'; } | permap "$PID"
	stacks "$T/in" <<< $'osj-sparse\t-\t[anon]+0x1010;[anon]+0x2010;[anon]+0x3010'
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" 'short+0x10 ([jit]);[anon]+0x2010;after+0x10 ([jit])'
	# 1 GiB more every 10 ms, of holes (no disk), up to 1 TiB.
	perl -e 'open(my $f, "+<", $ARGV[0]) or die; my $s = -s $f;
		while ($s < 1 << 40) { $s += 1 << 30; truncate($f, $s) or exit; select(undef, undef, undef, 0.01) }' "/tmp/perf-$PID.map" &
	local w=$!
	sleep 0.3
	run --separate-stderr timeout 120 sh -c 'ulimit -v 1000000 && exec "$@"' sh "$SYM" "$T/in"
	kill "$w" 2>/dev/null || true
	wait "$w" 2>/dev/null || true
	assert_success
	assert_equal "$stderr" "offsample-symbolize: /proc/$PID/root/tmp/perf-$PID.map: larger than 64 MiB; only its last 64 MiB read"
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x1010;[anon]+0x2010;[anon]+0x3010'
}

@test "a process's jitdumps are read up to 4194304 records together, however many it maps" {
	mkdir -p "$T/d1" "$T/d2"
	"$GEN" "$T/a.dump" '<' load:1000:10:1:first pad:2200000 load:3000:10:3:lastA
	"$GEN" "$T/b.dump" '<' load:2000:10:2:second pad:2200000 load:4000:10:4:lastB
	start osj-recs "$T/a.dump" "$T/d1" "$T/b.dump" "$T/d2"
	stacks "$T/in" <<< $'osj-recs\t-\t[anon]+0x1005;[anon]+0x2005;[anon]+0x3005;[anon]+0x4005'
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	# The file read first is read whole, the other up to the bound
	# (which comes first follows the addresses they are mapped at).
	assert_regex "$(ustacks <<< "$output")" '^first\+0x5 \(\[jit\]\);second\+0x5 \(\[jit\]\);(lastA\+0x5 \(\[jit\]\);\[anon\]\+0x4005|\[anon\]\+0x3005;lastB\+0x5 \(\[jit\]\))$'
	assert_regex "$stderr" "^offsample-symbolize: /proc/$PID/map_files/[0-9a-f-]+: more than 4194304 records in the jitdumps of its process; the rest not read\$"
}

@test "a run keeps at most 1048576 JIT map entries of all processes; later processes' maps are not read, said once" {
	local i p in=
	for i in 1 2 3 4 5; do
		start "osj-tot$i"
		perl -e 'printf "%x 10 f%d\n", 0x10000000 + $_ * 16, $_ for 0 .. 262143' | permap "$PID"
		in+="osj-tot$i	$PID	[anon]+0x10000005"$'\n'
	done
	stacks "$T/in" 'comm,pid' <<< "${in%$'\n'}"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$(ustacks <<< "$output" | sort | uniq -c | awk '{ print $1, $2 }')" "1 [anon]+0x10000005
4 f0+0x5"
	assert_equal "$stderr" "offsample-symbolize: the JIT maps read hold 1048576 entries, the most a run keeps; those of later processes not read"
}

@test "what is not a regular file at a map's name is not even opened (a FIFO, a device: an open can act)" {
	command -v strace > /dev/null || skip "strace is not installed"
	start osj-dev
	mkfifo "/tmp/perf-$PID.map"
	stacks "$T/in" <<< $'osj-dev\t-\t[anon]+0x1010'
	run -0 strace -f -qq -e trace=open,openat -o "$T/trace" timeout 30 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x1010'
	run -1 grep "perf-$PID.map" "$T/trace"
	rm "/tmp/perf-$PID.map"
	[ "$(id -u)" = 0 ] || return 0
	mknod "/tmp/perf-$PID.map" c 1 3
	run -0 strace -f -qq -e trace=open,openat -o "$T/trace" "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" '[anon]+0x1010'
	run -1 grep "perf-$PID.map" "$T/trace"
}
