#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# offsample pprof: stacks files -> gzipped profile.proto, read back with
# the real `go tool pprof` (Debian's golang-go, tests/lib/deps.sh).

load tools-common
load symbolize-common

setup_file() {
	local d=$BATS_FILE_TMPDIR
	cat > "$d/prog.c" <<'CEOF'
__attribute__((noinline)) int prog_leaf(int x) { volatile int y = x; return y * 3; }
__attribute__((noinline)) int prog_middle(int x) { return prog_leaf(x) + 1; }
int main(int argc, char **argv) { (void)argv; return prog_middle(argc); }
CEOF
	gcc -O1 -g -fno-omit-frame-pointer -o "$d/prog" "$d/prog.c"
}

setup() {
	T=$BATS_TEST_TMPDIR
	P=$BATS_FILE_TMPDIR/prog
	GO=$(command -v /usr/lib/go/bin/go || command -v go) || fail "no go: tests/lib/deps.sh test installs golang-go"
	export OFFSAMPLE_CACHE_DIR=$T/cache
	mkdir -p "$OFFSAMPLE_CACHE_DIR"
	chmod 700 "$OFFSAMPLE_CACHE_DIR"
}

# off SYMBOL: the file offset of SYMBOL+4 in prog (a return address in it).
off() {
	local va seg
	va=$(nm "$P" | awk -v s="$1" '$3 == s { print $1 }')
	# The executable PT_LOAD: vaddr and offset.
	seg=$(readelf -lW "$P" | awk '$1 == "LOAD" && / R E / { print $3, $2; exit }')
	printf '0x%x' $(( 0x$va + 4 - ${seg% *} + ${seg#* } ))
}

# stacks FILE: two generations at 10 and 20 Hz; lock and sleep records
# with pids, kernel frames and user frames in prog.
stacks() {
	local leaf mid
	leaf=$(off prog_leaf)
	mid=$(off prog_middle)
	{
	for hz in 10 20; do
		printf '# offsample stacks v2\n# source: drain\n# version: 0.2.0\n# kernel: 6.1.0-56-amd64\n# hostname: h\n'
		printf '# start: 1700000000.000\n# duration: 2.000\n# hz: %s\n# key: comm,pid\n' "$hz"
		printf '# columns: count reason state pid tid comm tname kstack ustack wobj cgroup\n'
		printf '5\tlock\tS\t1234\t-\tdb\t-\t__schedule+0x34d/0xa00;futex_wait+0x185/0x270\t%s+%s;%s+%s\tfutex\t/db.service\n' "$P" "$leaf" "$P" "$mid"
		printf '3\tsleep\tS\t1235\t-\tcron\t-\t__schedule+0x34d/0xa00;do_nanosleep+0x7b/0x140 [foo]\t%s+%s\tclock_nanosleep\t/\n' "$P" "$mid"
	done
	} > "$1"
}

@test "pprof: go tool pprof reads it: samples, wall time across rates, functions" {
	stacks "$T/s"
	run -0 "$OFFS" pprof -o "$T/p.pb.gz" "$T/s"
	assert_output ""
	run -0 "$GO" tool pprof -top "$T/p.pb.gz"
	assert_output --partial "Total samples = 16"
	assert_line --regexp '^ +16 +100% +100% +16 +100% +__schedule$'
	assert_line --regexp '^ +0 +0% +100% +10 +62.50% +futex_wait$'
	assert_line --regexp '^ +0 +0% +100% +16 +100% +prog_middle$'
	assert_line --regexp '^ +0 +0% +100% +10 +62.50% +prog_leaf$'
	# wall: 5+3 samples at 10 Hz (0.8 s) and at 20 Hz (0.4 s).
	run -0 "$GO" tool pprof -sample_index=wall -top "$T/p.pb.gz"
	# (go tool pprof prints 1200ms or 1.20s depending on its version)
	assert_output --regexp 'Total samples = (1200ms|1\.20s)'
	assert_line --regexp '^ +0 +0% +100% +(750ms|0\.75s) +62.50% +futex_wait$'
	assert_output --partial "Duration: 4s"
	# The names are in the profile (offsample-symbolize named them), not
	# found by go tool pprof in the file: with the file gone, still named.
	cp "$P" "$T/prog2"
	P=$T/prog2
	stacks "$T/s2"
	"$OFFS" pprof -o "$T/p2.pb.gz" "$T/s2"
	rm "$T/prog2"
	run -0 "$GO" tool pprof -top "$T/p2.pb.gz"
	assert_line --regexp ' prog_leaf$'
	assert_line --regexp ' prog_middle$'
}

@test "pprof: labels: -tagfocus=reason=lock, comm, cgroup, numeric pid" {
	stacks "$T/s"
	"$OFFS" pprof -o "$T/p.pb.gz" "$T/s"
	run -0 "$GO" tool pprof -tagfocus=reason=lock -top "$T/p.pb.gz"
	assert_output --partial "Showing nodes accounting for 10, 62.50% of 16 total"
	refute_output --partial do_nanosleep
	run -0 "$GO" tool pprof -tags "$T/p.pb.gz"
	assert_output --regexp 'reason: Total 16(\.0| of 16)'
	assert_output --regexp ' 10(\.0)? \(62\.50%\): lock'
	assert_output --regexp ' 6(\.0)? \(37\.50%\): sleep'
	assert_output --regexp ' 10(\.0)? \(62\.50%\): db'
	assert_output --regexp ' 10(\.0)? \(62\.50%\): /db\.service'
	assert_output --regexp ' 16(\.0)? \(  100%\): S'
	assert_output --regexp ' 10(\.0)? \(62\.50%\): futex'
	# numeric labels
	assert_output --regexp ' 10(\.0)? \(62\.50%\): 1234'
	assert_output --regexp ' 6(\.0)? \(37\.50%\): 1235'
}

@test "pprof: user locations keep their file as mapping and file offset as address" {
	stacks "$T/s"
	"$OFFS" pprof --no-symbolize -o "$T/p.pb.gz" "$T/s"
	run -0 "$GO" tool pprof -raw "$T/p.pb.gz"
	# Mappings: the kernel, the module, the program.
	assert_output --regexp "[0-9]+: 0x0/0x0/0x0 \[kernel.kallsyms\]"
	assert_output --regexp "0x0/0x0/0x0 \[foo\]"
	assert_output --regexp "0x0/0x0/0x0 $P"
	assert_output --regexp "0x0*$(off prog_leaf | sed 's/^0x//') M=[0-9]+"
	# go tool pprof symbolizes them by file and offset itself.
	run -0 "$GO" tool pprof -top "$T/p.pb.gz"
	assert_line --regexp ' prog_leaf$'
}

@test "pprof: a mapping carries its file's build-id (readelf's) when the file is the one sampled" {
	local id
	id=$(readelf -nW "$P" | sed -n 's/.*Build ID: *//p')
	[ -n "$id" ]
	stacks "$T/s"
	# The module's identity line of the program, in both generations.
	sed -i "/^# columns:/a $(fileline "$P")" "$T/s"
	"$OFFS" pprof -o "$T/p.pb.gz" "$T/s"
	run -0 "$GO" tool pprof -raw "$T/p.pb.gz"
	assert_output --regexp "[0-9]+: 0x0/0x0/0x0 $P $id"
	# Not named (nothing read the file): no build-id.
	"$OFFS" pprof --no-symbolize -o "$T/p.pb.gz" "$T/s"
	run -0 "$GO" tool pprof -raw "$T/p.pb.gz"
	assert_line --regexp "^[0-9]+: 0x0/0x0/0x0 $P( |$)"
	refute_output --partial "$id"
	# Replaced since (another mtime): no build-id.
	touch -d '2001-02-03 04:05:06' "$P"
	"$OFFS" pprof -o "$T/p.pb.gz" "$T/s"
	run -0 "$GO" tool pprof -raw "$T/p.pb.gz"
	refute_output --partial "$id"
}

@test "pprof: stdin, refusal of a terminal, bad input, usage" {
	stacks "$T/s"
	"$OFFS" pprof - < "$T/s" > "$T/p.pb.gz"
	run -0 "$GO" tool pprof -top "$T/p.pb.gz"
	assert_output --partial "Total samples = 16"
	run script -qec "$OFFS pprof $T/s" /dev/null
	assert_failure 2
	assert_output --partial "offsample pprof: will not write a binary profile to a terminal"
	printf 'garbage\n' > "$T/bad"
	run --separate-stderr "$OFFS" pprof -o "$T/x" "$T/bad"
	assert_failure 1
	assert_equal "$stderr" 'offsample pprof: '"$T"'/bad: not an offsample stacks file (no "# offsample stacks" header)'
	run --separate-stderr "$OFFS" pprof --bogus
	assert_failure 2
	assert_regex "$stderr" "^offsample pprof: unknown option --bogus"
	run -0 "$OFFS" pprof --help
	assert_output --partial "Usage: offsample pprof"
}

@test "pprof: Python frames (format v4) are functions with their source file and line, read back by go tool pprof" {
	local f=$SFIX/python-drain-v4-6.1.0.txt
	run -0 "$OFFS" pprof -o "$T/py.pb.gz" "$f"
	run -0 "$GO" tool pprof -raw "$T/py.pb.gz"
	# A location per Python frame, no address, the file and line of the
	# recording (go tool pprof -raw prints "ID: 0x0 NAME FILE:LINE s=0").
	assert_output --regexp ': 0x0 hold_lock /[^ ]*/tests/workload/offsample-pywait\.py:34 '
	assert_output --regexp ': 0x0 Thread\.run /usr/lib/python3\.11/threading\.py:975 '
	assert_output --regexp ': 0x0 Sleeper\.nap /[^ ]*/offsample-pywait\.py:[0-9]+ '
	# The stack keeps its order: hold_lock called from Thread.run.
	run -0 "$GO" tool pprof -traces "$T/py.pb.gz"
	assert_output --regexp 'hold_lock
( +[^ ].*
)* +Thread\.run
 +Thread\._bootstrap_inner
 +Thread\._bootstrap'
}
