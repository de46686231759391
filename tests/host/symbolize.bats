#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tools/offsample-symbolize on the host, with programs compiled here: a
# PIE executable and a non-PIE one with frame pointers, a shared library,
# stripped copies, a separate debug file found by build-id, C++.  The
# stacks files are written by hand in format v2 with "# file:" identity
# lines made from stat(1), and the expected names and offsets computed
# with nm and readelf.
#
#   bats tests/host/symbolize.bats

load tools-common
load symbolize-common

SYM=$ROOT/tools/offsample-symbolize

setup_file() {
	local d="$BATS_FILE_TMPDIR/my dir"
	mkdir -p "$d"
	cat > "$d/lib.c" <<'EOF'
__attribute__((noinline)) int lib_block(int x) { volatile int y = x; return y * 3; }
__attribute__((noinline)) static int lib_static(int x) { volatile int y = x; return lib_block(y) + 1; }
int lib_entry(int x) { return lib_static(x) + 2; }
EOF
	cat > "$d/prog.c" <<'EOF'
int lib_entry(int);
__attribute__((noinline)) int prog_leaf(int x) { volatile int y = x; return lib_entry(y); }
__attribute__((noinline)) int prog_middle(int x) { return prog_leaf(x) + 1; }
int main(int argc, char **argv) { (void)argv; return prog_middle(argc); }
EOF
	cat > "$d/cxx.cc" <<'EOF'
namespace ns { struct Widget { int n; __attribute__((noinline)) int wait_for(int t); }; }
int ns::Widget::wait_for(int t) { volatile int y = t; return y + n; }
template <typename T> __attribute__((noinline)) T twice(T v) { volatile T y = v; return y + y; }
int main() { ns::Widget w{1}; return w.wait_for(2) + (int)twice<long>(3); }
EOF
	local cf='-O1 -g -fno-omit-frame-pointer -Wl,--build-id'
	gcc $cf -fPIC -shared -o "$d/libosd.so" "$d/lib.c"
	gcc $cf -fPIE -pie -o "$d/prog" "$d/prog.c" -L"$d" -losd
	gcc $cf -no-pie -o "$d/prog-nopie" "$d/prog.c" -L"$d" -losd
	g++ $cf -o "$d/cxx" "$d/cxx.cc"
	strip -o "$d/prog.stripped" "$d/prog"
	strip -o "$d/libosd-stripped.so" "$d/libosd.so"
	# Separate debug info: the symbols live only in the debug file,
	# installed under a debug directory by build-id.
	objcopy --only-keep-debug "$d/prog" "$d/prog.debug"
	objcopy --strip-debug --strip-unneeded --strip-all "$d/prog" "$d/prog.dbgonly"
	local id
	id=$(readelf -nW "$d/prog" | sed -n 's/.*Build ID: *//p')
	mkdir -p "$BATS_FILE_TMPDIR/debug/.build-id/${id:0:2}"
	cp "$d/prog.debug" "$BATS_FILE_TMPDIR/debug/.build-id/${id:0:2}/${id:2}.debug"
	echo "$id" > "$BATS_FILE_TMPDIR/buildid"
}

setup() {
	T=$BATS_TEST_TMPDIR
	D="$BATS_FILE_TMPDIR/my dir"
	DBG=$BATS_FILE_TMPDIR/debug
	BUILDID=$(cat "$BATS_FILE_TMPDIR/buildid")
	# Never the user's own cache.
	export OFFSAMPLE_CACHE_DIR=$T/cache
	KST='__schedule+0x34d/0xa00;schedule+0x5a/0xd0;futex_wait_queue+0x60/0x90;futex_wait+0x185/0x270;do_futex+0x106/0x1b0;__x64_sys_futex+0x8e/0x1d0;do_syscall_64+0x5d/0xb0;entry_SYSCALL_64_after_hwframe+0x6e/0xd8'
}

# fake_nm: an nm that leaves a trace ($T/nm-called) and fails, in
# $T/bin (put it first on PATH).
fake_nm() {
	mkdir -p "$T/bin"
	printf '#!/bin/sh\ntouch "%s/nm-called"\nexit 1\n' "$T" > "$T/bin/nm"
	chmod +x "$T/bin/nm"
}

# record COUNT USTACK: a lock record of "prog" with that user stack.
record() {
	printf '%s\tlock\tS\t10\t11\tprog\tprog-w\t%s\t%s\tfutex(0x7f00)\t/test.slice/prog.service\n' "$1" "$KST" "$2"
}
# The program's stack: lib_block (leaf, in the library), lib_static,
# lib_entry, prog_leaf, prog_middle, main; return addresses point a few
# bytes into the callers.
prog_stack() {
	local p=$1 l=$2
	printf '%s+%s;%s+%s;%s+%s;%s+%s;%s+%s;%s+%s' \
		"$l" "$(fileoff "$l" lib_block 4)" "$l" "$(fileoff "$l" lib_static 9)" \
		"$l" "$(fileoff "$l" lib_entry 5)" "$p" "$(fileoff "$p" prog_leaf 12)" \
		"$p" "$(fileoff "$p" prog_middle 9)" "$p" "$(fileoff "$p" main 7)"
}
# The same, named.
prog_named() {
	local pb=${1##*/} lb=${2##*/}
	printf '%s' "lib_block+0x4 ($lb);lib_static+0x9 ($lb);lib_entry+0x5 ($lb);prog_leaf+0xc ($pb);prog_middle+0x9 ($pb);main+0x7 ($pb)"
}
# mkstacks OUT PROG LIB: a file with the program's stack and pseudo frames.
mkstacks() {
	{
		header
		fileline "$3"
		fileline "$2"
		record 7 "$(prog_stack "$2" "$3")"
		record 2 '[vdso]+0x9f0;[anon]+0x7f3a1c000000;[heap]+0x55d0c0de0000;[stack]+0x7ffd00001000;[unmapped]+0x10;[busy]+0x7f3a1c0008c0;[raced]'
		printf '1\tio\tD\t-\t-\tkworker/0:1\t-\tio_schedule+0x42/0x70\t-\t-\t/\n'
	} > "$1"
	# The header's samples and records are what the file holds.
	"$BATS_TEST_DIRNAME/../lib/restamp-stacks" "$1"
}

@test "--help: usage on stdout, exit 0; bad option: one line, exit 2" {
	run --separate-stderr "$SYM" --help
	assert_success
	assert_equal "$stderr" ""
	assert_output --partial "Usage: offsample-symbolize [OPTIONS] [FILE...]"
	assert_output --partial "--debug-dir DIR"
	assert_output --partial "(replaced)"
	run -0 "$SYM" -h
	assert_output --partial "Usage:"
	run --separate-stderr "$SYM" --frobnicate
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "offsample-symbolize: unknown option: frobnicate (see --help)"
}

@test "errors: missing file, directory, no stacks: one line, exit 1, nothing on stdout" {
	run --separate-stderr "$SYM" "$T/none"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample-symbolize: cannot read $T/none: no such file or directory"
	run --separate-stderr "$SYM" "$T"
	assert_failure 1
	assert_equal "$stderr" "offsample-symbolize: $T: is a directory"
	: > "$T/empty"
	run --separate-stderr "$SYM" "$T/empty"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample-symbolize: no offsample stacks in the input"
	# A header without records (an empty generation) is fine.
	header > "$T/hdr"
	run --separate-stderr "$SYM" "$T/hdr"
	assert_success
	assert_equal "$stderr" ""
	assert_line "# symbolized: offsample-symbolize on $(uname -n)"
}

@test "input that is not offsample stacks (folded stacks, garbage): exit 1, nothing on stdout" {
	printf 'a;b;c 3\nx;y 1\n' > "$T/folded"
	run --separate-stderr "$SYM" "$T/folded"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "offsample-symbolize: $T/folded: not offsample stacks (line 1: no \"# offsample stacks\" header before it)"
	run --separate-stderr "$SYM" <<< $'hello\nworld'
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" 'offsample-symbolize: standard input: not offsample stacks (line 1: no "# offsample stacks" header before it)'
}

@test "PIE executable and shared library: leaf at its offset, callers at offset-1, printed with theirs" {
	mkstacks "$T/in" "$D/prog" "$D/libosd.so"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	# Exactly one line per input line; only the ustack field changed,
	# and the "# symbolized:" line came before the columns line (and a
	# "# build-id:" line after each file line).
	assert_equal "${#lines[@]}" $(($(nlines "$T/in") + 3))
	assert_equal "$(grep -v '^# symbolized:\|^# build-id:' <<< "$output" | awk -F'\t' -v OFS='\t' '{ $9 = "" } 1')" \
		"$(awk -F'\t' -v OFS='\t' '{ $9 = "" } 1' "$T/in")"
	run -0 grep -n '^# symbolized: \|^# columns:' <<< "$output"
	assert_line --index 0 "16:# symbolized: offsample-symbolize on $(uname -n)"
	run -0 awk -F'\t' '!/^#/ { print $9 }' <<< "$("$SYM" "$T/in")"
	assert_line --index 0 "$(prog_named "$D/prog" "$D/libosd.so")"
	# Pseudo frames and "no user stack" pass through.
	assert_line --index 1 '[vdso]+0x9f0;[anon]+0x7f3a1c000000;[heap]+0x55d0c0de0000;[stack]+0x7ffd00001000;[unmapped]+0x10;[busy]+0x7f3a1c0008c0;[raced]'
	assert_line --index 2 '-'
}

@test "a non-PIE executable: file offsets differ from addresses" {
	local p=$D/prog-nopie
	# Its text is mapped at 0x400000 and up, not at its file offset.
	[ "$(fileoff "$p" prog_leaf)" != "$(printf '0x%x' "$(vaddr "$p" prog_leaf)")" ] || false
	{ header; fileline "$p"; record 1 "$p+$(fileoff "$p" prog_leaf 3);$p+$(fileoff "$p" main 7)"; } > "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	prog_leaf+0x3 (prog-nopie);main+0x7 (prog-nopie)	futex(0x7f00)	"
}

@test "return addresses: a call that ends a function is looked up at offset-1" {
	local p=$D/prog size end
	size=$(symsize "$p" prog_middle)
	end=$(fileoff "$p" prog_middle "$size")
	# As a caller frame, one past the end of prog_middle is prog_middle,
	# printed with the original offset (its size); offset 0 of a
	# function as a leaf is that function.
	{ header; fileline "$p"; record 1 "$p+$(fileoff "$p" prog_leaf);$p+$end"; } > "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	prog_leaf+0x0 (prog);prog_middle+$(printf '0x%x' "$size") (prog)	"
	# As the leaf, the same offset is not prog_middle.
	{ header; fileline "$p"; record 1 "$p+$end"; } > "$T/in2"
	run -0 "$SYM" "$T/in2"
	refute_output --partial "prog_middle"
}

@test "C++: names are demangled" {
	local c=$D/cxx
	{ header; fileline "$c"
	  record 1 "$c+$(fileoff "$c" _ZN2ns6Widget8wait_forEi 4);$c+$(fileoff "$c" _Z5twiceIlET_S0_ 6);$c+$(fileoff "$c" main 9)"
	} > "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	ns::Widget::wait_for(int)+0x4 (cxx);long twice<long>(long)+0x6 (cxx);main+0x9 (cxx)	"
}

@test "stripped binaries: PATH+0xOFF kept; a stripped library still names its exported functions" {
	local p=$D/prog.stripped l=$D/libosd-stripped.so po lo1 lo2 lo3
	po=$(fileoff "$D/prog" prog_leaf 12)
	lo1=$(fileoff "$D/libosd.so" lib_block 4)
	lo2=$(fileoff "$D/libosd.so" lib_static 9)
	lo3=$(fileoff "$D/libosd.so" lib_entry 5)
	{ header; fileline "$l"; fileline "$p"; record 1 "$l+$lo1;$l+$lo2;$l+$lo3;$p+$po"; } > "$T/in"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	# .dynsym has lib_block and lib_entry, not the static function.
	assert_line --partial "	lib_block+0x4 (libosd-stripped.so);$l+$lo2;lib_entry+0x5 (libosd-stripped.so);$p+$po	"
}

@test "separate debug file under --debug-dir, found by build-id" {
	local p=$D/prog.dbgonly o1 o2
	# The binary has no symbols of its own.
	run --separate-stderr nm "$p"
	assert_output ""
	assert_equal "$(readelf -nW "$p" | sed -n 's/.*Build ID: *//p')" "$BUILDID"
	o1=$(fileoff "$D/prog" prog_leaf 12)
	o2=$(fileoff "$D/prog" main 7)
	{ header; fileline "$p"; record 1 "$p+$o1;$p+$o2"; } > "$T/in"
	run -0 "$SYM" --debug-dir "$DBG" "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog.dbgonly);main+0x7 (prog.dbgonly)	"
	# Without the debug directory (the default has no such file): raw.
	run -0 "$SYM" "$T/in"
	assert_line --partial "	$p+$o1;$p+$o2	"
	# Both answers were cached, under separate keys by build-id.
	run -0 ls "$T/cache/syms"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+\$"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+-debug-[0-9]+-[0-9]+\$"
	run -0 "$SYM" --debug-dir "$DBG" "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog.dbgonly);main+0x7 (prog.dbgonly)	"
}

@test "damaged ELF headers (a 4 GiB program header table, one past the end): the frame kept, no crash" {
	local p=$T/prog po
	po=$(fileoff "$D/prog" prog_leaf 12)
	cp "$D/prog" "$p"
	# e_phentsize 0xffff, e_phnum 0xfffe: a table of 4 GiB.
	printf '\377\377\376\377' | dd of="$p" bs=1 seek=54 conv=notrunc status=none
	{ header; record 1 "$p+$po"; } > "$T/in"
	# 512 MiB of address space: plenty for the tool, far less than the
	# table (the reader asked for all of it and died "Out of memory!").
	run -0 bash -c 'ulimit -v 524288; exec "$0" --no-cache "$1"' "$SYM" "$T/in"
	refute_output --partial 'Out of memory'
	assert_line --partial "	$p+$po	"
	# Whole table, but past the end of the file (e_phoff 2^40).
	cp "$D/prog" "$p"
	printf '\0\0\0\0\0\1\0\0' | dd of="$p" bs=1 seek=32 conv=notrunc status=none
	run -0 bash -c 'ulimit -v 524288; exec "$0" --no-cache "$1"' "$SYM" "$T/in"
	assert_line --partial "	$p+$po	"
	# The undamaged file still gives the name.
	cp "$D/prog" "$p"
	run -0 "$SYM" --no-cache "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog)	"
}

@test "a file replaced since the recording: (replaced), never a wrong name; deleted: (missing)" {
	cp "$D/prog" "$T/prog"
	cp "$D/libosd.so" "$T/libosd.so"
	mkstacks "$T/in" "$T/prog" "$T/libosd.so"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	$(prog_named "$T/prog" "$T/libosd.so")	"
	# Overwritten in place (same inode) by another program.
	cp "$D/cxx" "$T/prog"
	run -0 "$SYM" "$T/in"
	local want lo po
	lo=$(fileoff "$D/libosd.so" lib_block 4)
	po=$(fileoff "$D/prog" prog_leaf 12)
	assert_line --partial "	lib_block+0x4 (libosd.so);"
	assert_line --partial ";$T/prog+$po (replaced);"
	refute_output --partial "(prog)"
	refute_output --partial "(cxx)"
	# Same content, only the modification time changed: replaced too.
	cp "$D/prog" "$T/prog"
	touch -d '2001-02-03 04:05:06' "$T/prog"
	run -0 "$SYM" "$T/in"
	assert_line --partial ";$T/prog+$po (replaced);"
	# Deleted: missing.
	rm "$T/libosd.so"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	$T/libosd.so+$lo (missing);"
	# Deleted at sample time (the kernel appends " (deleted)"): the file
	# at that path now is another one.
	{ header; record 1 "$D/prog (deleted)+$po"; } > "$T/del"
	run -0 "$SYM" "$T/del"
	assert_line --partial "	$D/prog (deleted)+$po (replaced)	"
}

@test "identity: inode compared only on the same device; no # file: line, no check" {
	local p=$D/prog po line
	po=$(fileoff "$p" prog_leaf 12)
	line=$(fileline "$p")
	# Another device (an overlay, a bind mount): the inode is not compared.
	{ header; sed 's/ dev=[0-9]*:[0-9]* ino=[0-9]* / dev=999:999 ino=1 /' <<< "$line"; record 1 "$p+$po"; } > "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog)	"
	# Same device, other inode: replaced.
	{ header; sed 's/ ino=[0-9]* / ino=1 /' <<< "$line"; record 1 "$p+$po"; } > "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	$p+$po (replaced)	"
	# No identity line (hand-made input): looked up as it is.
	{ header; record 1 "$p+$po"; } > "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog)	"
	# Identity lines are per generation: the second one describes
	# another file at the same path.
	{ header; fileline "$p"; record 1 "$p+$po"
	  header; sed 's/ size=[0-9]* / size=1 /' <<< "$line"; record 1 "$p+$po"; } > "$T/in"
	run -0 awk -F'\t' '!/^#/ { print $9 }' <<< "$("$SYM" "$T/in")"
	assert_output "$(printf '%s\n' "prog_leaf+0xc (prog)" "$p+$po (replaced)")"
}

@test "idempotent: symbolizing twice equals once; v1 input passes unchanged" {
	cp "$D/prog" "$T/prog"
	mkstacks "$T/in" "$T/prog" "$D/libosd.so"
	"$SYM" "$T/in" > "$T/once"
	"$SYM" "$T/once" > "$T/twice"
	run -0 cmp "$T/once" "$T/twice"
	rm "$T/prog"
	"$SYM" "$T/in" > "$T/once"
	"$SYM" < "$T/once" > "$T/twice"
	run -0 cmp "$T/once" "$T/twice"
	run -0 grep -c '(missing)' "$T/once"
	# A v1 file (no ustack column) and concatenations pass unchanged.
	run -0 "$SYM" "$SMALL"
	assert_equal "$output" "$(cat "$SMALL")"
	run -0 "$SYM" "$SMALL" - < "$SMALL"
	assert_equal "$output" "$(cat "$SMALL" "$SMALL")"
}

@test "build-ids: a # build-id: line after the file line of each file that is the one sampled, readelf's; none when replaced, missing or without one" {
	local lid
	cp "$D/prog" "$T/prog"
	lid=$(readelf -nW "$D/libosd.so" | sed -n 's/.*Build ID: *//p')
	[ -n "$lid" ] && [ "$lid" != "$BUILDID" ]
	mkstacks "$T/in" "$T/prog" "$D/libosd.so"
	run -0 "$SYM" "$T/in"
	# Each right after its file line, in the file lines' order.
	run -0 grep -A1 '^# file: ' <<< "$output"
	assert_equal "$(grep -c '^# build-id: ' <<< "$output")" 2
	assert_line --index 1 "# build-id: $lid path=$D/libosd.so"
	assert_line --index 3 "# build-id: $BUILDID path=$T/prog"
	# Replaced since the recording: no build-id (the file there now is
	# another); one written by an earlier run is not kept either.
	"$SYM" "$T/in" > "$T/named"
	cp "$D/cxx" "$T/prog"
	run -0 "$SYM" "$T/named"
	assert_line "# build-id: $lid path=$D/libosd.so"
	refute_line --partial "# build-id: $BUILDID"
	# Missing, and a file linked without a build-id: none.
	gcc -O1 -Wl,--build-id=none -fPIC -shared -o "$T/libnone.so" "$D/lib.c"
	[ -z "$(readelf -nW "$T/libnone.so" | sed -n 's/.*Build ID: *//p')" ]
	mkstacks "$T/in2" "$T/prog" "$T/libnone.so"
	rm "$T/prog"
	run -0 "$SYM" "$T/in2"
	refute_line --partial '# build-id: '
	assert_line --partial "(missing)"
}

@test "the symbol cache: a second run does not run nm, same output; --no-cache; unsafe cache dir ignored" {
	mkstacks "$T/in" "$D/prog" "$D/libosd.so"
	run -0 "$SYM" "$T/in"
	local first=$output
	run -0 ls "$T/cache/syms"
	assert_equal "${#lines[@]}" 2
	# An nm that leaves a trace and fails, first on PATH.
	fake_nm
	PATH=$T/bin:/usr/bin:/bin run -0 "$SYM" "$T/in"
	assert_equal "$output" "$first"
	[ ! -e "$T/nm-called" ] || false
	# Without the cache the fake nm is used (and names nothing).
	PATH=$T/bin:/usr/bin:/bin run -0 "$SYM" --no-cache "$T/in"
	[ -e "$T/nm-called" ] || false
	refute_output --partial "prog_leaf"
	rm "$T/nm-called"
	# --cache-dir; a cache directory others may write to is not used.
	run -0 "$SYM" --cache-dir "$T/c2" "$T/in"
	assert_equal "$output" "$first"
	run -0 ls "$T/c2/syms"
	assert_equal "${#lines[@]}" 2
	chmod 0777 "$T/c2/syms"
	PATH=$T/bin:/usr/bin:/bin run -0 "$SYM" --cache-dir "$T/c2" "$T/in"
	[ -e "$T/nm-called" ] || false
	# Cron: no HOME, minimal PATH, default cache location.
	run -0 env -i PATH=/usr/bin:/bin OFFSAMPLE_CACHE_DIR="$T/c3" "$SYM" "$T/in"
	assert_equal "$output" "$first"
}

@test "--fill-cache: symbols cached ahead, then named without nm; bad files are errors, the rest cached" {
	mkstacks "$T/in" "$D/prog" "$D/libosd.so"
	run -0 "$SYM" --no-cache "$T/in"
	local want=$output
	run -1 --separate-stderr "$SYM" --fill-cache "$D/prog" /etc/passwd "$T/none" "$D" "$D/libosd.so"
	assert_equal "${lines[0]}" "$D/prog: $(nm --defined-only "$D/prog" | awk '$2 ~ /^[TtWwi]$/' | sort -u -k1,1 | wc -l) symbols"
	assert_line --index 1 --regexp "^$D/libosd\.so: [1-9][0-9]* symbols$"
	assert_equal "${#lines[@]}" 2
	assert_equal "$stderr" "offsample-symbolize: /etc/passwd: not an ELF file
offsample-symbolize: $T/none: no such file
offsample-symbolize: $D: not a regular file"
	run -0 ls "$T/cache/syms"
	assert_equal "${#lines[@]}" 2
	# Symbolizing now starts no nm (a failing one that leaves a trace is
	# first on PATH) and names as a fresh run does.
	fake_nm
	PATH=$T/bin:/usr/bin:/bin run -0 "$SYM" "$T/in"
	assert_equal "$output" "$want"
	assert_output --partial "prog_leaf"
	[ ! -e "$T/nm-called" ] || false
	# Usage errors.
	run -2 --separate-stderr "$SYM" --fill-cache
	assert_equal "$stderr" "offsample-symbolize: --fill-cache needs at least one ELF file (see --help)"
	run -2 --separate-stderr "$SYM" --fill-cache --no-cache "$D/prog"
	assert_equal "$stderr" "offsample-symbolize: --fill-cache and --no-cache exclude each other"
	chmod 0777 "$T/cache"
	run -1 --separate-stderr "$SYM" --fill-cache "$D/prog"
	assert_equal "$stderr" "offsample-symbolize: no usable cache directory ($T/cache/syms: not a directory of yours that only you can write)"
}

@test "--root: files looked up under a directory" {
	mkdir -p "$T/root/opt/app"
	cp "$D/prog" "$T/root/opt/app/prog"
	touch -r "$D/prog" "$T/root/opt/app/prog"
	local po
	po=$(fileoff "$D/prog" prog_leaf 12)
	{ header; fileline "$T/root/opt/app/prog" | sed "s|path=.*|path=/opt/app/prog|"
	  record 1 "/opt/app/prog+$po"; } > "$T/in"
	run -0 "$SYM" --root "$T/root" "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog)	"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	/opt/app/prog+$po (missing)	"
}

@test "escaped paths and names: \\x5c and \\x3b in paths decoded to find the file" {
	mkdir -p "$T/a;b\\c"
	cp "$D/prog" "$T/a;b\\c/prog"
	local po
	po=$(fileoff "$D/prog" prog_leaf 12)
	{ header; fileline "$T/a;b\\c/prog" | sed 's/;/\\x3b/; s/\\c/\\x5cc/'
	  record 1 "$T/a\\x3bb\\x5cc/prog+$po"; } > "$T/in"
	run -0 grep -c 'a\\x3bb\\x5cc/prog$' "$T/in"
	run -0 "$SYM" "$T/in"
	assert_line --partial "	prog_leaf+0xc (prog)	"
}

@test "offsample collapse, report and flamegraph name the frames by themselves" {
	mkstacks "$T/in" "$D/prog" "$D/libosd.so"
	local k='entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule'
	run --separate-stderr "$OFFS" collapse "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_output - <<END
io;kworker/0:1;io_schedule 1
lock;prog;[raced];[busy];[unmapped];[stack];[heap];[anon];[vdso];$k 2
lock;prog;main;prog_middle;prog_leaf;lib_entry;lib_static;lib_block;$k 7
END
	run -0 "$OFFS" collapse --user-only --dso --offsets --wobj "$T/in"
	assert_line "lock;prog;futex(0x7f00);main+0x7 (prog);prog_middle+0x9 (prog);prog_leaf+0xc (prog);lib_entry+0x5 (libosd.so);lib_static+0x9 (libosd.so);lib_block+0x4 (libosd.so) 7"
	run -0 "$OFFS" report "$T/in"
	assert_output --partial "$(printf '      --\n      lib_block (libosd.so)\n      lib_static (libosd.so)\n      lib_entry (libosd.so)\n      prog_leaf (prog)\n      prog_middle (prog)\n      main (prog)\n')"
	run --separate-stderr "$OFFS" flamegraph -o "$T/g.svg" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	local f
	for f in main prog_middle prog_leaf lib_entry lib_static lib_block futex_wait; do
		grep -q "data-n=\"$f\"" "$T/g.svg" || { echo "no frame $f"; return 1; }
	done
	# After the program is gone: the frames say so.
	mkdir "$T/p"
	cp "$D/prog" "$T/p/prog"
	mkstacks "$T/in2" "$T/p/prog" "$D/libosd.so"
	rm "$T/p/prog"
	run -0 "$OFFS" collapse --user-only "$T/in2"
	assert_line "lock;prog;prog+$(fileoff "$D/prog" main 7) (missing);prog+$(fileoff "$D/prog" prog_middle 9) (missing);prog+$(fileoff "$D/prog" prog_leaf 12) (missing);lib_entry;lib_static;lib_block 7"
}
