#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tools/offsample-symbolize naming a stripped program through each route
# of separate debug information: the build-id directory, .gnu_debuglink
# (beside the file, in .debug/, under the debug directory; CRC checked),
# MiniDebugInfo (.gnu_debugdata) and a real debuginfod server (Debian's
# debuginfod, started here on 127.0.0.1 over a directory made here).
# The program is built with -g, its debug information split off with
# objcopy and stripped; every function (a static one too) must be named
# exactly, and as an independent reader names it (eu-addr2line, gdb for
# the CRC check).  Also: debuginfod is never asked unless the user said
# so, a miss is cached, and a server that never answers costs a bounded
# time and leaves the other routes working.
#
#   bats tests/host/symbolize-debuginfo.bats

load tools-common
load symbolize-common

SYM=$ROOT/tools/offsample-symbolize
FUNCS='dbg_static_leaf dbg_middle dbg_static_caller dbg_top main'

setup_file() {
	local s=$BATS_FILE_TMPDIR/src v=$BATS_FILE_TMPDIR/v id
	mkdir -p "$s" "$v"
	cat > "$s/dbg.c" <<'EOF'
static volatile int sink;
__attribute__((noinline, noclone)) static int dbg_static_leaf(int x)
{ volatile int y = x; for (int i = 0; i < 3; i++) y += i * x; sink = y; return y; }
__attribute__((noinline, noclone)) int dbg_middle(int x)
{ volatile int z = x; sink = z; return dbg_static_leaf(z) + 7; }
__attribute__((noinline, noclone)) static int dbg_static_caller(int x)
{ volatile int q = x * 2; sink = q; return dbg_middle(q) - 1; }
__attribute__((noinline, noclone)) int dbg_top(int x)
{ volatile int w = x; sink = w; return dbg_static_caller(w) + dbg_middle(w); }
int main(int argc, char **argv) { (void)argv; return dbg_top(argc) & 1; }
EOF
	# prog: its functions only in .symtab; progx (-rdynamic): the
	# global ones in .dynsym too (MiniDebugInfo is merged with it).
	(cd "$s" && gcc -O1 -g -Wl,--build-id -o prog dbg.c &&
		gcc -O1 -g -Wl,--build-id -rdynamic -o progx dbg.c &&
		objcopy --only-keep-debug prog prog.debug &&
		strip -o prog.stripped prog &&
		objcopy --add-gnu-debuglink=prog.debug prog.stripped prog.linked &&
		printf 'not the same bytes' > junk &&
		objcopy --add-section .offsample_junk=junk prog.debug prog.debug.badcrc)
	id=$(readelf -nW "$s/prog" | sed -n 's/.*Build ID: *//p')
	echo "$id" > "$BATS_FILE_TMPDIR/buildid"
	# (a) build-id directory.
	mkdir -p "$v/a" "$v/a-dbg/.build-id/${id:0:2}"
	cp "$s/prog.linked" "$v/a/prog"
	cp "$s/prog.debug" "$v/a-dbg/.build-id/${id:0:2}/${id:2}.debug"
	# (b) .gnu_debuglink: beside, in .debug/, under the debug directory.
	mkdir -p "$v/b1" "$v/b2/.debug" "$v/b3" "$v/b3-dbg$v/b3"
	cp "$s/prog.linked" "$v/b1/prog"
	cp "$s/prog.debug" "$v/b1/prog.debug"
	cp "$s/prog.linked" "$v/b2/prog"
	cp "$s/prog.debug" "$v/b2/.debug/prog.debug"
	cp "$s/prog.linked" "$v/b3/prog"
	cp "$s/prog.debug" "$v/b3-dbg$v/b3/prog.debug"
	# (c) the right name, the wrong CRC (same build-id, same symbols).
	mkdir -p "$v/c"
	cp "$s/prog.linked" "$v/c/prog"
	cp "$s/prog.debug.badcrc" "$v/c/prog.debug"
	# (d) MiniDebugInfo, as Fedora makes it (find-debuginfo's recipe):
	# the functions .dynsym lacks, xz-compressed into .gnu_debugdata.
	mkdir -p "$v/d"
	(cd "$s" && nm -D progx --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms &&
		nm progx --format=posix --defined-only | awk '$2 ~ /^[TtD]$/ { print $1 }' | sort > funcsyms &&
		comm -13 dynsyms funcsyms > keep_symbols &&
		objcopy --only-keep-debug progx progx.debug &&
		objcopy -S --remove-section .gdb_index --remove-section .comment \
			--keep-symbols=keep_symbols progx.debug mini_debuginfo &&
		cp progx progx.mini && strip --strip-all -R .comment progx.mini &&
		xz -f mini_debuginfo &&
		objcopy --add-section .gnu_debugdata=mini_debuginfo.xz progx.mini)
	cp "$s/progx.mini" "$v/d/progx"
	# (e) debuginfod: only the server has the debug file.
	mkdir -p "$v/e" "$BATS_FILE_TMPDIR/served"
	cp "$s/prog.stripped" "$v/e/prog"
	cp "$s/prog.debug" "$BATS_FILE_TMPDIR/served/prog.debug"
	start_debuginfod
}

# start_debuginfod: Debian's debuginfod on a free loopback port over
# BATS_FILE_TMPDIR/served, one scan, in-memory database; ready when its
# /metrics says the scan is done.  Its URL in BATS_FILE_TMPDIR/dfd-url.
start_debuginfod() {
	local port pid try i
	command -v debuginfod > /dev/null || return 0
	for try in 1 2 3 4 5; do
		port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport')
		debuginfod -F -d :memory: -p "$port" -t 0 -g 0 -c 1 "$BATS_FILE_TMPDIR/served" \
			> "$BATS_FILE_TMPDIR/debuginfod.log" 2>&1 3>&- &
		pid=$!
		echo "$pid" > "$BATS_FILE_TMPDIR/debuginfod.pid"
		for i in $(seq 100); do
			kill -0 "$pid" 2> /dev/null || break
			if curl -s "http://127.0.0.1:$port/metrics" | grep -q '^thread_work_total{role="traverse"} 1'; then
				echo "http://127.0.0.1:$port" > "$BATS_FILE_TMPDIR/dfd-url"
				return 0
			fi
			sleep 0.1
		done
		kill "$pid" 2> /dev/null || true
		wait "$pid" 2> /dev/null || true
	done
	echo "debuginfod did not start:" >&2
	cat "$BATS_FILE_TMPDIR/debuginfod.log" >&2
	return 1
}

teardown_file() {
	local pid
	pid=$(cat "$BATS_FILE_TMPDIR/debuginfod.pid" 2> /dev/null) || return 0
	kill "$pid" 2> /dev/null || true
}

setup() {
	T=$BATS_TEST_TMPDIR
	S=$BATS_FILE_TMPDIR/src
	V=$BATS_FILE_TMPDIR/v
	BUILDID=$(cat "$BATS_FILE_TMPDIR/buildid")
	DFD=$(cat "$BATS_FILE_TMPDIR/dfd-url" 2> /dev/null) || DFD=
	# Never the user's caches, servers or settings.
	export OFFSAMPLE_CACHE_DIR=$T/cache DEBUGINFOD_CACHE_PATH=$T/dfd-cache
	unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT OFFSAMPLE_DEBUGINFOD_CLIENT
	KST='__schedule+0x34d/0xa00;schedule+0x5a/0xd0;do_nanosleep+0x7b/0x140;hrtimer_nanosleep+0x9e/0x170;do_syscall_64+0x5d/0xb0;entry_SYSCALL_64_after_hwframe+0x6e/0xd8'
	LISTENER_PID=
}

teardown() {
	[ -z "$LISTENER_PID" ] || kill "$LISTENER_PID" 2> /dev/null || true
}

need_debuginfod() {
	[ -n "$DFD" ] || skip "debuginfod (Debian package debuginfod) is not installed"
}

# delta FUNC [REF]: how far into FUNC the test's frames point (half its
# size in REF, default src/prog, so a return address - 1 is in it too).
delta() {
	echo $(($(symsize "${2:-$S/prog}" "$1") / 2))
}
# ustack FILE [REF]: the user stack of FILE (a stripped copy of REF):
# dbg_static_leaf as the leaf, its callers up to main.
ustack() {
	local f=$1 ref=${2:-$S/prog} out= fn
	for fn in $FUNCS; do
		out+="${out:+;}$f+$(fileoff "$ref" "$fn" "$(delta "$fn" "$ref")")"
	done
	printf '%s' "$out"
}
# named BASE [REF]: the same stack, named.
named() {
	local out= fn
	for fn in $FUNCS; do
		out+="${out:+;}$fn+$(printf '0x%x' "$(delta "$fn" "$2")") ($1)"
	done
	printf '%s' "$out"
}
# mkstacks OUT FILE [REF] [FILE2 REF2...]: a stacks file with one record
# per FILE (its stack) and "# file:" lines for them.
mkstacks() {
	local out=$1 f ref
	shift
	{
		header
		local args=("$@") i
		for ((i = 0; i < ${#args[@]}; i += 2)); do
			fileline "${args[i]}"
		done
		for ((i = 0; i < ${#args[@]}; i += 2)); do
			f=${args[i]} ref=${args[i + 1]:-$S/prog}
			printf '%d\tsleep\tS\t10\t11\tprog\tprog-w\t%s\t%s\tclock_nanosleep\t/test.slice\n' \
				$((i + 1)) "$KST" "$(ustack "$f" "$ref")"
		done
	} > "$out"
	"$BATS_TEST_DIRNAME/../lib/restamp-stacks" "$out"
}
# ustacks: the ustack column of the symbolizer's output, one per record.
ustacks() {
	awk -F'\t' '!/^#/ { print $9 }'
}
# eu_names REF FILE [eu-addr2line options]: what eu-addr2line -f names
# the test's addresses in FILE (a stripped REF), as `named` without the
# offsets.
eu_names() {
	local ref=$1 f=$2 fn a out=
	shift 2
	for fn in $FUNCS; do
		a=$(printf '0x%x' $(($(vaddr "$ref" "$fn") + $(delta "$fn" "$ref"))))
		out+="${out:+;}$(eu-addr2line "$@" -f -e "$f" "$a" | head -n1)"
	done
	printf '%s' "$out"
}
# strip_offsets: "name+0x12 (prog);..." -> "name;..."
strip_offsets() {
	sed 's/+0x[0-9a-f]* ([^)]*)//g'
}
# listener LOG: a TCP server on 127.0.0.1 that accepts connections, logs
# each one to LOG and never answers (a server that hangs); its URL in
# LURL, its pid in LISTENER_PID (killed by teardown).
listener() {
	local log=$1
	: > "$log"
	perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 64, ReuseAddr => 1) or die "listen: $!";
		open(my $log, ">>", $ARGV[0]) or die; $log->autoflush(1);
		print $log "port ", $s->sockport, "\n";
		my @keep;
		while (my $c = $s->accept) { print $log "connection\n"; push @keep, $c }' "$log" 3>&- &
	LISTENER_PID=$!
	local i
	for i in $(seq 50); do
		grep -q '^port ' "$log" && break
		sleep 0.1
	done
	LURL=http://127.0.0.1:$(sed -n 's/^port //p' "$log")
}
connections() {
	grep -c '^connection$' "$1" || true
}
# debuginfo_requests: how many /buildid/.../debuginfo requests the test
# server has had (its Prometheus metrics).
debuginfo_requests() {
	curl -s "$DFD/metrics" | awk '/^http_requests_total\{type="debuginfo"\}/ { n = $2 } END { print n + 0 }'
}

@test "build-id directory first (kept), then .gnu_debuglink: every function named, as eu-addr2line names them" {
	local p=$V/a/prog
	# The stripped file has neither the functions nor a .symtab.
	run -0 nm -D --defined-only "$p"
	refute_output --partial dbg_
	run -1 bash -c "readelf -SW '$p' | grep -F .symtab"
	mkstacks "$T/in" "$p"
	run --separate-stderr "$SYM" --debug-dir "$V/a-dbg" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	assert_equal "$(ustacks <<< "$output" | strip_offsets)" "$(eu_names "$S/prog" "$p" --debuginfo-path="$V/a-dbg")"
	# The build-id file is used first: the debuglink one (beside it now)
	# does not enter the cache key.
	cp "$S/prog.debug" "$V/a/prog.debug"
	run -0 "$SYM" --debug-dir "$V/a-dbg" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	run -0 ls "$T/cache/syms"
	assert_output --regexp "^buildid-$BUILDID-[0-9]+-debug-[0-9]+-[0-9]+\$"
	# Without it, the debuglink file names the same.
	run -0 "$SYM" --debug-dir "$T/none" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	rm "$V/a/prog.debug"
}

@test ".gnu_debuglink: beside the file, in .debug/ beside it, under the debug directory; eu-addr2line agrees" {
	local b p
	for b in b1 b2 b3; do
		p=$V/$b/prog
		# The section names prog.debug and its CRC.
		run -0 readelf -p .gnu_debuglink "$p"
		assert_output --partial "prog.debug"
		mkstacks "$T/in-$b" "$p"
		run --separate-stderr "$SYM" --debug-dir "$V/b3-dbg" "$T/in-$b"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
		assert_equal "$(ustacks <<< "$output" | strip_offsets)" \
			"$(eu_names "$S/prog" "$p" --debuginfo-path=":.debug:$V/b3-dbg")"
	done
	# Each in its own cache entry, keyed by where the debug file was.
	run -0 ls "$T/cache/syms"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+-linkb-[0-9]+-[0-9]+\$"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+-linkd-[0-9]+-[0-9]+\$"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+-linkg-[0-9]+-[0-9]+\$"
	# The debug directory of --root by default: DIR/usr/lib/debug/PATH.
	mkdir -p "$T/root/opt/app" "$T/root/usr/lib/debug/opt/app"
	cp -p "$S/prog.linked" "$T/root/opt/app/prog"
	cp "$S/prog.debug" "$T/root/usr/lib/debug/opt/app/"
	{ header; record_line "/opt/app/prog" "$(ustack /opt/app/prog)"; } > "$T/root.in"
	run -0 "$SYM" --root "$T/root" --no-cache "$T/root.in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
}

# record_line PATH USTACK: one record.
record_line() {
	printf '1\tsleep\tS\t10\t11\tprog\tprog-w\t%s\t%s\tclock_nanosleep\t/test.slice\n' "$KST" "$2"
}

@test ".gnu_debuglink with the wrong CRC: that file is not used (gdb refuses it too); the next place with the right one is" {
	local p=$V/c/prog
	mkstacks "$T/in" "$p"
	# Same name, same build-id, same symbols: only the CRC tells.
	run -0 "$SYM" --debug-dir "$T/none" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$p")"
	refute_output --partial dbg_
	# gdb: "the debug information found in ... does not match ... (CRC mismatch)".
	if command -v gdb > /dev/null; then
		run env -u DEBUGINFOD_URLS gdb -nx -batch -ex "info symbol $(printf '0x%x' "$(vaddr "$S/prog" dbg_middle)")" "$p"
		assert_output --partial "CRC mismatch"
		refute_output --partial "dbg_middle"
	fi
	# The right file in .debug/ (the next place): used.
	mkdir -p "$V/c/.debug"
	cp "$S/prog.debug" "$V/c/.debug/prog.debug"
	run -0 "$SYM" --debug-dir "$T/none" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	if command -v gdb > /dev/null; then
		run env -u DEBUGINFOD_URLS gdb -nx -batch -ex "info symbol $(printf '0x%x' "$(vaddr "$S/prog" dbg_middle)")" "$p"
		assert_output --partial "dbg_middle in section .text"
	fi
	rm -r "$V/c/.debug"
}

@test "MiniDebugInfo: static functions from .gnu_debugdata merged with the .dynsym ones; eu-addr2line agrees" {
	local p=$V/d/progx ref=$S/progx fn
	run -0 readelf -SW "$p"
	assert_output --partial ".gnu_debugdata"
	refute_output --partial ".symtab"
	# .dynsym has the global functions, the section the static ones.
	run -0 nm -D --defined-only "$p"
	assert_output --partial " dbg_middle"
	refute_output --partial "dbg_static"
	run -0 bash -c "xz -dc < '$S/mini_debuginfo.xz' > '$T/mini' && nm '$T/mini'"
	assert_output --partial " dbg_static_leaf"
	refute_output --partial " dbg_middle"
	{ header; fileline "$p"; record_line "$p" "$(ustack "$p" "$ref")"; } > "$T/in"
	run --separate-stderr "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" "$(named progx "$ref")"
	assert_equal "$(ustacks <<< "$output" | strip_offsets)" "$(eu_names "$ref" "$p")"
	run -0 ls "$T/cache/syms"
	assert_output --regexp "^buildid-[0-9a-f]+-[0-9]+-mini\$"
	# A section that is not xz: one warning, the .dynsym names.
	cp "$p" "$T/progx"
	printf 'not xz at all' > "$T/junk"
	objcopy --update-section .gnu_debugdata="$T/junk" "$T/progx"
	{ header; record_line "$T/progx" "$(ustack "$T/progx" "$ref")"; } > "$T/in2"
	run --separate-stderr "$SYM" --no-cache "$T/in2"
	assert_success
	assert_equal "$stderr" "offsample-symbolize: $T/progx: .gnu_debugdata is not an xz-compressed ELF file; named from its own symbols"
	assert_output --partial ";dbg_middle+"
	refute_output --partial "dbg_static"
}

@test "MiniDebugInfo that unpacks to more than 64 MiB (an xz bomb): refused with a warning, the .dynsym names, nothing left behind" {
	local p=$T/progb ref=$S/progx
	cp "$V/d/progx" "$p"
	# An ELF magic, then 100 MB of zeros: 15 kB compressed.
	perl -e 'print "\x7fELF"; print "\0" x (1 << 20) for 1 .. 100' | xz -0 -c > "$T/bomb.xz"
	objcopy --update-section .gnu_debugdata="$T/bomb.xz" "$p"
	{ header; record_line "$p" "$(ustack "$p" "$ref")"; } > "$T/in"
	mkdir "$T/tmp"
	run --separate-stderr env TMPDIR="$T/tmp" "$SYM" --no-cache "$T/in"
	assert_success
	assert_equal "$stderr" "offsample-symbolize: $p: .gnu_debugdata unpacks to more than 64 MiB; named from its own symbols"
	assert_output --partial ";dbg_middle+"
	refute_output --partial "dbg_static"
	assert_equal "$(ls -A "$T/tmp")" ""
}

@test ".gnu_debuglink naming a FIFO or a huge sparse file: not read, no hang (the owner of the program's directory chooses them)" {
	local d=$T/e p
	mkdir -p "$d"
	p=$d/prog
	cp "$V/c/prog" "$p"
	mkfifo "$d/prog.debug"
	mkstacks "$T/in" "$p"
	# The old code blocked in open() on the FIFO for ever.
	run -0 timeout 60 "$SYM" --no-cache --debug-dir "$T/none" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$p")"
	# 20 GB of holes: reading it all for the CRC took a root run 55 s of
	# CPU; a debug file is never that big.  At most 20 s of CPU time.
	rm "$d/prog.debug"
	truncate -s 20G "$d/prog.debug"
	run -0 bash -c 'ulimit -t 20; exec "$@"' - "$SYM" --no-cache --debug-dir "$T/none" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$p")"
	rm "$d/prog.debug"
}

@test "MiniDebugInfo without xz: the .dynsym names, one warning, nothing cached; named once xz is back" {
	local p=$V/d/progx ref=$S/progx
	# xz hidden in a mount namespace of its own (the symbolizer looks
	# in /usr/bin and /bin whatever PATH says).
	unshare -m --propagation private true 2> /dev/null || skip "needs unshare -m (root)"
	cp "$p" "$T/progx2"
	{ header; record_line "$p" "$(ustack "$p" "$ref")"; record_line "$T/progx2" "$(ustack "$T/progx2" "$ref")"; } > "$T/in"
	run --separate-stderr unshare -m --propagation private sh -c \
		'mount --bind /dev/null "$(readlink -f /usr/bin/xz)" && exec "$@"' sh "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" "offsample-symbolize: xz not found: MiniDebugInfo (.gnu_debugdata) not read, files that have it are named from their .dynsym only (install xz-utils)"
	assert_output --partial ";dbg_middle+"
	refute_output --partial "dbg_static"
	run -1 bash -c "ls '$T/cache/syms' | grep -- '-mini\$'"
	run -0 "$SYM" "$T/in"
	assert_output --partial "	dbg_static_leaf+"
}

@test "debuginfod (a real server): named through debuginfod-find, curl and HTTP::Tiny, cached in the elfutils client's layout; eu-addr2line agrees" {
	need_debuginfod
	local p=$V/e/prog how
	mkstacks "$T/in" "$p"
	# Nothing local names it.
	run -0 "$SYM" --no-cache "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$p")"
	for how in debuginfod-find curl perl; do
		rm -rf "$T/dfd-cache" "$T/cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" "$T/in"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
		# The client's cache: BUILDID/debuginfo, the server's file.
		run -0 cmp "$T/dfd-cache/$BUILDID/debuginfo" "$S/prog.debug"
		run -0 ls "$T/cache/syms"
		assert_output --regexp "^buildid-$BUILDID-[0-9]+-dfd-[0-9]+-[0-9]+\$"
	done
	# --debuginfod URL instead of the variable (and no cached file).
	rm -rf "$T/dfd-cache"
	run -0 "$SYM" --no-cache --debuginfod "$DFD" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	# eu-addr2line through libdebuginfod, from its own cache.
	assert_equal "$(ustacks <<< "$output" | strip_offsets)" \
		"$(DEBUGINFOD_URLS=$DFD DEBUGINFOD_CACHE_PATH=$T/eu-cache eu_names "$S/prog" "$p")"
}

@test "debuginfod: a miss is cached (a 0-byte file) and not asked again; a hit is not asked again either" {
	need_debuginfod
	local p=$V/d/progx ref=$S/progx how n id
	id=$(readelf -nW "$p" | sed -n 's/.*Build ID: *//p')
	{ header; record_line "$p" "$(ustack "$p" "$ref")"; } > "$T/in"
	for how in debuginfod-find curl perl; do
		rm -rf "$T/dfd-cache"
		n=$(debuginfo_requests)
		# The server has no progx: asked once, the MiniDebugInfo names.
		run -0 env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
		assert_output --partial "	dbg_static_leaf+"
		assert_equal "$(debuginfo_requests)" $((n + 1))
		[ -f "$T/dfd-cache/$id/debuginfo" ] && [ ! -s "$T/dfd-cache/$id/debuginfo" ] || false
		run -0 env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
		assert_output --partial "	dbg_static_leaf+"
		assert_equal "$(debuginfo_requests)" $((n + 1))
		# Older than cache_miss_s: asked again.
		echo 1 > "$T/dfd-cache/cache_miss_s"
		touch -d '-1 minute' "$T/dfd-cache/$id/debuginfo"
		run -0 env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
		assert_equal "$(debuginfo_requests)" $((n + 2))
	done
	# A hit: the next run (without the symbol cache) reads the file.
	mkstacks "$T/in2" "$V/e/prog"
	rm -rf "$T/dfd-cache"
	n=$(debuginfo_requests)
	run -0 env DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in2"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	run -0 env DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in2"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	assert_equal "$(debuginfo_requests)" $((n + 1))
}

@test "debuginfod is never asked unless the user says so (DEBUGINFOD_URLS, --debuginfod), nor for files with a .symtab" {
	listener "$T/conn.log"
	mkstacks "$T/in" "$V/e/prog"
	# Not set, set but empty, or --no-debuginfod: no connection.
	run -0 env -u DEBUGINFOD_URLS "$SYM" --no-cache "$T/in"
	run -0 env DEBUGINFOD_URLS= "$SYM" --no-cache "$T/in"
	run -0 env DEBUGINFOD_URLS="$LURL" "$SYM" --no-cache --no-debuginfod "$T/in"
	run -0 env DEBUGINFOD_URLS="$LURL" "$SYM" --no-cache --debuginfod "$LURL" --no-debuginfod "$T/in"
	# Files with their own symbols, or a debug file here: none either.
	mkstacks "$T/own" "$S/prog" "" "$V/b1/prog"
	run -0 env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/own"
	assert_equal "$(connections "$T/conn.log")" 0
	assert_equal "$(ustacks <<< "$output")" "$(printf '%s\n' "$(named prog)" "$(named prog)")"
	# A file gone since the recording: (missing), nothing to ask with
	# (the recording has no build-ids).
	cp "$V/e/prog" "$T/gone"
	mkstacks "$T/gone.in" "$T/gone"
	rm "$T/gone"
	run -0 env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/gone.in"
	assert_output --partial "	$T/gone+0x"
	assert_output --partial " (missing);"
	assert_equal "$(connections "$T/conn.log")" 0
	# Asked: the listener sees it (so it would have seen the others).
	run -0 env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 OFFSAMPLE_DEBUGINFOD_CLIENT=perl "$SYM" --no-cache "$T/in"
	[ "$(connections "$T/conn.log")" -ge 1 ] || false
}

# base_time STACKS: seconds offsample-symbolize takes on STACKS asking no
# debuginfod server (the other routes as in the tests), rounded up.
base_time() {
	local t0 t1
	t0=$(date +%s%N)
	env DEBUGINFOD_URLS= "$SYM" --no-cache "$1" > /dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0 + 999999999) / 1000000000))
}

@test "debuginfod: a server that never answers costs a bounded time, the other routes still name, and it is not asked again" {
	listener "$T/conn.log"
	local how t0 t1 n base
	mkstacks "$T/in" "$V/e/prog" "" "$V/b1/prog" "" "$V/d/progx" "$S/progx"
	# Bounded: the server is asked once (one connection), then the run
	# stops asking; the time is only bounded against a hang, over a run
	# that asks no server on the same (maybe loaded) machine (a bound of
	# +4 s failed the make test of e1f1037: 8 s against 1 s, one
	# connection, beside two guests).
	base=$(base_time "$T/in")
	for how in debuginfod-find curl perl; do
		rm -rf "$T/cache" "$T/dfd-cache"
		n=$(connections "$T/conn.log")
		t0=$(date +%s)
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=2 "$SYM" "$T/in"
		t1=$(date +%s)
		assert_success
		# One time-out of 2 s (debuginfod-find is told
		# DEBUGINFOD_RETRY_LIMIT=0), then the run stops asking.
		[ $((t1 - t0)) -le $((base + 30)) ] || { echo "$how: took $((t1 - t0)) s, $base s without a server"; false; }
		assert_regex "$stderr" "^offsample-symbolize: debuginfod: .*; not asked again for 600 s\$"
		assert_equal "$(connections "$T/conn.log")" "$((n + 1))"
		# e/prog stays raw; the debuglink and MiniDebugInfo files are named.
		run -0 ustacks <<< "$output"
		assert_line --index 0 "$(ustack "$V/e/prog")"
		assert_line --index 1 "$(named prog)"
		assert_line --index 2 --partial "dbg_static_leaf+"
		# The next run does not wait for it (even with no symbol
		# cached: offsample's cache remembers the server did not answer).
		rm -r "$T/cache/syms"
		n=$(connections "$T/conn.log")
		t0=$(date +%s)
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=2 "$SYM" "$T/in"
		t1=$(date +%s)
		assert_success
		assert_equal "$stderr" ""
		[ $((t1 - t0)) -le $((base + 30)) ] || { echo "$how: took $((t1 - t0)) s, $base s without a server"; false; }
		assert_equal "$(connections "$T/conn.log")" "$n"
		run -0 ustacks <<< "$output"
		assert_line --index 1 "$(named prog)"
	done
	# Another server list is asked (the memory is of this one).
	kill "$LISTENER_PID"
	listener "$T/conn2.log"
	run -0 env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 OFFSAMPLE_DEBUGINFOD_CLIENT=perl "$SYM" --no-cache "$T/in"
	assert_equal "$(connections "$T/conn2.log")" 1
}

@test "debuginfod: a run spends at most six times DEBUGINFOD_TIMEOUT asking (a slow server, many files)" {
	local i off t0 t1 n base
	# A server that answers every request with a 404 after 0.8 s.
	perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 64, ReuseAddr => 1) or die;
		open(my $log, ">>", $ARGV[0]) or die; $log->autoflush(1);
		print $log "port ", $s->sockport, "\n";
		while (my $c = $s->accept) {
			print $log "connection\n";
			select(undef, undef, undef, 0.8);
			print $c "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
			close $c;
		}' "$T/slow.log" 3>&- &
	LISTENER_PID=$!
	for i in $(seq 50); do
		grep -q '^port ' "$T/slow.log" 2> /dev/null && break
		sleep 0.1
	done
	# Twelve stripped files with build-ids of their own.
	off=$(readelf -SW "$S/prog.stripped" | awk '{ for (i = 1; i < NF; i++) if ($i == ".note.gnu.build-id") print $(i + 3) }')
	local args=()
	for i in $(seq 10 21); do
		cp "$S/prog.stripped" "$T/p$i"
		printf '%s' "$i$i$i$i$i$i$i$i$i$i" | dd of="$T/p$i" bs=1 seek=$((16#$off + 16)) conv=notrunc status=none
		args+=("$T/p$i" "")
	done
	[ "$(readelf -nW "$T/p10" | sed -n 's/.*Build ID: *//p')" != "$BUILDID" ] || false
	mkstacks "$T/in" "${args[@]}"
	base=$(base_time "$T/in")
	t0=$(date +%s)
	run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=perl DEBUGINFOD_TIMEOUT=1 \
		DEBUGINFOD_URLS="http://127.0.0.1:$(sed -n 's/^port //p' "$T/slow.log")" "$SYM" --no-cache "$T/in"
	t1=$(date +%s)
	assert_success
	assert_regex "$stderr" '^offsample-symbolize: debuginfod: [5-7] s spent asking; not asked again in this run$'
	# It stopped asking at 6 s (the message above; which files were
	# asked is counted below); the time only catches a run that hangs:
	# under load the rest of the run stretches too (14 s against 2 s
	# without a server was seen on a loaded 2-CPU host).
	[ $((t1 - t0)) -le $((base + 30)) ] || { echo "took $((t1 - t0)) s, $base s without a server"; false; }
	# 0.8 s each: seven asked (5.6 s; less than a second was left for
	# the eighth; fewer on a loaded machine), the others not; each miss
	# cached.
	n=$(connections "$T/slow.log")
	[ "$n" -ge 3 ] && [ "$n" -le 8 ] || { echo "$n requests"; false; }
	run -0 find "$T/dfd-cache" -name debuginfo -size 0
	assert_equal "${#lines[@]}" "$n"
}

@test "the symbol cache key follows the debug source: a debug file installed or fetched later is used" {
	need_debuginfod
	local p=$T/app/prog
	mkdir -p "$T/app"
	cp "$S/prog.linked" "$p"
	mkstacks "$T/in" "$p"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$p")"
	# debuginfod asked now: a new entry.
	run -0 "$SYM" --debuginfod "$DFD" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	# A debuglink file installed: a new entry too (without debuginfod).
	rm -rf "$T/dfd-cache"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$p")"
	cp "$S/prog.debug" "$T/app/"
	run -0 "$SYM" "$T/in"
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	run -0 ls "$T/cache/syms"
	assert_equal "${#lines[@]}" 3
	assert_line --regexp "^buildid-$BUILDID-[0-9]+\$"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+-dfd-[0-9]+-[0-9]+\$"
	assert_line --regexp "^buildid-$BUILDID-[0-9]+-linkb-[0-9]+-[0-9]+\$"
}

@test "a warm run loads none of the debug-info code; the installed copy (reader and module inline) names through every route" {
	need_debuginfod
	local a=$T/alone
	# A checkout copy: after a first run, the module can be gone.
	mkdir -p "$T/co/lib"
	cp "$SYM" "$T/co/"
	cp "$ROOT"/tools/lib/Offsample*.pm "$T/co/lib/"
	mkstacks "$T/warm" "$V/b1/prog" "" "$V/d/progx" "$S/progx"
	run -0 "$T/co/offsample-symbolize" "$T/warm"
	local want=$output
	assert_output --partial "	dbg_static_leaf+"
	rm "$T/co/lib/OffsampleDebuginfo.pm" "$T/co/lib/OffsampleDebuginfod.pm"
	run -0 "$T/co/offsample-symbolize" "$T/warm"
	assert_equal "$output" "$want"
	run -1 --separate-stderr "$T/co/offsample-symbolize" --no-cache "$T/warm"
	assert_regex "$stderr" "Can't locate OffsampleDebuginfo.pm"
	mkstacks "$T/in" "$V/b1/prog" "" "$V/d/progx" "$S/progx" "$V/e/prog" ""
	run -0 env DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
	want=$output
	assert_equal "$(ustacks <<< "$output" | sed -n 3p)" "$(named prog)"
	# Installed as make install does: one file, copied anywhere.
	mkdir -p "$a"
	perl "$ROOT/packaging/inline-reader.pl" "$SYM" "$ROOT/tools/lib/OffsampleStacks.pm" 9.9.9 > "$a/offsample-symbolize"
	chmod 755 "$a/offsample-symbolize"
	run -1 grep -c '^use OffsampleStacks\|^# BEGIN lazy OffsampleDebuginfod\?$' "$a/offsample-symbolize"
	rm -rf "$T/dfd-cache"
	run --separate-stderr env DEBUGINFOD_URLS="$DFD" "$a/offsample-symbolize" --no-cache "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$output" "$want"
	run -0 "$a/offsample-symbolize" --version
	assert_output "offsample-symbolize 9.9.9"
}

@test "--debuginfod and --no-debuginfod: documented in --help; a bad URL is a usage error; DEBUGINFOD_URLS junk is skipped with a warning" {
	run -0 "$SYM" --help
	assert_output --partial "--debuginfod URL"
	assert_output --partial "--no-debuginfod"
	assert_output --partial ".gnu_debuglink"
	mkstacks "$T/in" "$V/e/prog"
	run --separate-stderr "$SYM" --debuginfod ftp://x "$T/in"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "offsample-symbolize: --debuginfod: 'ftp://x' is not an http:// or https:// URL"
	run --separate-stderr "$SYM" --debuginfod '' "$T/in"
	assert_failure 2
	assert_equal "$stderr" "offsample-symbolize: --debuginfod needs a URL"
	run --separate-stderr "$SYM" --debuginfod
	assert_failure 2
	assert_equal "$stderr" "offsample-symbolize: option debuginfod requires an argument (see --help)"
	run --separate-stderr env DEBUGINFOD_URLS="file:///srv/debug" "$SYM" --no-cache "$T/in"
	assert_success
	assert_equal "$stderr" "offsample-symbolize: DEBUGINFOD_URLS: 'file:///srv/debug' is not an http:// or https:// URL; not used"
}

# fake_server MODE ARG: an HTTP server on 127.0.0.1 answering every
# request alike: "file PATH" (200, PATH with its Content-Length),
# "stream PATH" (200, PATH without a length, the connection closed at
# its end), "redirect URL" (302 to URL and the request's path).  Its URL
# in LURL, its pid in LISTENER_PID; each request logged to T/fake.log.
fake_server() {
	local i
	: > "$T/fake.log"
	perl -MIO::Socket::INET -e '
		my ($mode, $arg, $logf) = @ARGV;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 64, ReuseAddr => 1) or die "listen: $!";
		open(my $log, ">>", $logf) or die; $log->autoflush(1);
		print $log "port ", $s->sockport, "\n";
		$SIG{PIPE} = "IGNORE";
		while (my $c = $s->accept) {
			my $req = <$c> // next;
			while (my $h = <$c>) { last if $h =~ /^\r?\n\z/ }
			my ($path) = $req =~ /^GET (\S+)/;
			print $log "GET $path\n";
			if ($mode eq "redirect") {
				print $c "HTTP/1.1 302 Found\r\nLocation: $arg$path\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
			} else {
				open(my $f, "<:raw", $arg) or die; local $/; my $b = <$f>;
				print $c "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n",
					($mode eq "file" ? "Content-Length: " . length($b) . "\r\n" : ""), "Connection: close\r\n\r\n", $b;
			}
			close $c;
		}' "$1" "$2" "$T/fake.log" 3>&- &
	LISTENER_PID=$!
	for i in $(seq 50); do
		grep -q '^port ' "$T/fake.log" && break
		sleep 0.1
	done
	LURL=http://127.0.0.1:$(sed -n 's/^port //p' "$T/fake.log")
}

@test "debuginfod: a file whose build-id is not the one asked for is not used, from a server or from the cache (removed there, and asked again)" {
	local how other
	other=$(readelf -nW "$S/progx" | sed -n 's/.*Build ID: *//p')
	[ "$other" != "$BUILDID" ] || false
	objcopy --only-keep-debug "$S/progx" "$T/other.debug"
	fake_server file "$T/other.debug"
	mkstacks "$T/in" "$V/e/prog"
	for how in debuginfod-find curl perl; do
		rm -rf "$T/dfd-cache" "$T/cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
		assert_regex "$stderr" "^offsample-symbolize: debuginfod: .*build-id $other.*; not asked again"
		[ "$how" = debuginfod-find ] || [ ! -e "$T/dfd-cache/$BUILDID/debuginfo" ] || false
	done
	kill "$LISTENER_PID"
	# A wrong file already in the cache (as another client left it):
	# not used, said so and removed; the server, which has the right
	# one, is asked, by every client.
	need_debuginfod
	for how in debuginfod-find curl perl; do
		rm -rf "$T/dfd-cache"
		mkdir -p "$T/dfd-cache/$BUILDID"
		cp "$T/other.debug" "$T/dfd-cache/$BUILDID/debuginfo"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$stderr" "offsample-symbolize: debuginfod: $T/dfd-cache/$BUILDID/debuginfo is not the debug file of $BUILDID (its build-id: $other); removed"
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
		run -0 cmp "$T/dfd-cache/$BUILDID/debuginfo" "$S/prog.debug"
	done
}

@test "debuginfod: a file larger than DEBUGINFOD_MAXSIZE is not fetched, whether or not the server says its size; the server is not taken for down" {
	need_debuginfod
	local how size mode
	size=$(stat -c %s "$S/prog.debug")
	mkstacks "$T/in" "$V/e/prog"
	# The real server says the size: every client refuses it.
	for how in debuginfod-find curl perl; do
		rm -rf "$T/dfd-cache" "$T/cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" DEBUGINFOD_MAXSIZE=$((size - 1)) "$SYM" "$T/in"
		assert_success
		assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
		assert_equal "$stderr" "offsample-symbolize: debuginfod: the debug file of $BUILDID is larger than $((size - 1)) bytes (DEBUGINFOD_MAXSIZE); not fetched"
		run -0 find "$T/dfd-cache" -type f -size +0 -path "*$BUILDID*"
		assert_output ""
		# Remembered as a miss (a 0-byte file): the next run does not
		# fetch it again.
		[ -f "$T/dfd-cache/$BUILDID/debuginfo" ] && [ ! -s "$T/dfd-cache/$BUILDID/debuginfo" ] || false
		# Not marked down: with the limit raised, the next run fetches.
		rm -rf "$T/dfd-cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" DEBUGINFOD_MAXSIZE=$size "$SYM" "$T/in"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	done
	# A server that does not say the size: stopped at the limit, asked
	# once a run (file_info and symbols both want the file), and not
	# again by the next run (a miss).
	local n
	for mode in stream file; do
		fake_server "$mode" "$S/prog.debug"
		n=0
		for how in debuginfod-find curl perl; do
			rm -rf "$T/dfd-cache" "$T/cache"
			run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" DEBUGINFOD_MAXSIZE=1000 "$SYM" --no-cache "$T/in"
			n=$((n + 1))
			assert_equal "$(grep -c "^GET /buildid/$BUILDID/debuginfo\$" "$T/fake.log")" "$n"
			run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" DEBUGINFOD_MAXSIZE=1000 "$SYM" --no-cache "$T/in"
			assert_equal "$(grep -c "^GET /buildid/$BUILDID/debuginfo\$" "$T/fake.log")" "$n"
			rm -rf "$T/dfd-cache" "$T/cache"
			run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" DEBUGINFOD_MAXSIZE=1000 "$SYM" "$T/in"
			n=$((n + 1))
			assert_success
			assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
			# (debuginfod-find only knows that it could not write.)
			assert_regex "$stderr" "^offsample-symbolize: debuginfod: the debug file of $BUILDID is larger than 1000 bytes \(DEBUGINFOD_MAXSIZE\)( or could not be written to the cache)?; not fetched\$"
			run -0 find "$T/dfd-cache" -type f -size +1000c
			assert_output ""
		done
		kill "$LISTENER_PID"
	done
}

@test "debuginfod: redirects followed (HTTP and HTTPS only), as the elfutils client does" {
	need_debuginfod
	local how
	fake_server redirect "$DFD"
	mkstacks "$T/in" "$V/e/prog"
	for how in debuginfod-find curl perl; do
		rm -rf "$T/dfd-cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	done
	assert_equal "$(grep -c "^GET /buildid/$BUILDID/debuginfo\$" "$T/fake.log")" 3
	kill "$LISTENER_PID"
	# Not to another scheme.
	fake_server redirect "file://$S"
	for how in curl perl; do
		rm -rf "$T/dfd-cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$LURL" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
		assert_regex "$stderr" '^offsample-symbolize: debuginfod: .*; not asked again'
	done
}

@test "debuginfod: a client cache that is not private is not used; a miss is never written through a link planted in the cache; stale partial downloads removed" {
	need_debuginfod
	local id
	listener "$T/conn.log"
	mkstacks "$T/in" "$V/e/prog"
	mkdir -p "$T/dfd-cache"
	chmod 0777 "$T/dfd-cache"
	run --separate-stderr env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/in"
	assert_success
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
	assert_equal "$stderr" "offsample-symbolize: debuginfod: the cache $T/dfd-cache is not private to user $(id -u): $T/dfd-cache (owner $(id -u), mode 0777) is writable by others; not used (DEBUGINFOD_CACHE_PATH chooses another)"
	assert_equal "$(connections "$T/conn.log")" 0
	if [ "$(id -u)" = 0 ]; then
		chmod 0700 "$T/dfd-cache"
		chown 65534 "$T/dfd-cache"
		run --separate-stderr env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/in"
		assert_success
		assert_regex "$stderr" "the cache $T/dfd-cache is not private to user 0: $T/dfd-cache \(owner 65534, mode 0700\) is another user's; not used"
		assert_equal "$(connections "$T/conn.log")" 0
	fi
	# A private cache where a link waits at the miss's place (dangling:
	# it would be followed to make a file elsewhere).
	rm -rf "$T/dfd-cache"
	id=$(readelf -nW "$V/d/progx" | sed -n 's/.*Build ID: *//p')
	mkdir -p -m 0700 "$T/dfd-cache/$id"
	ln -s "$T/planted" "$T/dfd-cache/$id/debuginfo"
	: > "$T/dfd-cache/$id/.debuginfo.77.abc"
	touch -d '-2 hours' "$T/dfd-cache/$id/.debuginfo.77.abc"
	: > "$T/dfd-cache/$id/.debuginfo.78.abd"
	{ header; record_line "$V/d/progx" "$(ustack "$V/d/progx" "$S/progx")"; } > "$T/in2"
	for how in curl perl; do
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in2"
		assert_success
		assert_equal "$stderr" ""
		assert_output --partial "	dbg_static_leaf+"
		[ ! -e "$T/planted" ] && [ ! -L "$T/dfd-cache/$id/debuginfo" ] || false
		[ -f "$T/dfd-cache/$id/debuginfo" ] && [ ! -s "$T/dfd-cache/$id/debuginfo" ] || false
		rm "$T/dfd-cache/$id/debuginfo"
		ln -s "$T/planted" "$T/dfd-cache/$id/debuginfo"
	done
	run -0 ls -A "$T/dfd-cache/$id"
	assert_output $'.debuginfo.78.abd\ndebuginfo'
}

@test "debuginfod: a cache below a directory another user can change is not used, nor made there (root run with a user's HOME); below /tmp it is" {
	[ "$(id -u)" = 0 ] || skip "needs root (directories of another user)"
	need_debuginfod
	listener "$T/conn.log"
	mkstacks "$T/in" "$V/e/prog"
	# A user's home: root would write where the user can swap .cache
	# for a link.
	mkdir -p -m 0755 "$T/home/.cache"
	chown 65534 "$T/home" "$T/home/.cache"
	run --separate-stderr env -u DEBUGINFOD_CACHE_PATH -u XDG_CACHE_HOME HOME="$T/home" \
		DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/in"
	assert_success
	assert_equal "$stderr" "offsample-symbolize: debuginfod: the cache $T/home/.cache/debuginfod_client is not private to user 0: $T/home (owner 65534, mode 0755) is another user's; not used (DEBUGINFOD_CACHE_PATH chooses another)"
	assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
	assert_equal "$(connections "$T/conn.log")" 0
	[ ! -e "$T/home/.cache/debuginfod_client" ] || false
	# Root's own directory in it is no better (the user can move it).
	mkdir -m 0700 "$T/home/.cache/debuginfod_client"
	run --separate-stderr env -u DEBUGINFOD_CACHE_PATH -u XDG_CACHE_HOME HOME="$T/home" \
		DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/in"
	assert_regex "$stderr" "^offsample-symbolize: debuginfod: the cache $T/home/.cache/debuginfod_client is not private to user 0: $T/home \(owner 65534, mode 0755\) is another user's; not used"
	# A link to it, or a directory above writable by all (not sticky).
	ln -s "$T/home/.cache/debuginfod_client" "$T/link"
	run --separate-stderr env DEBUGINFOD_CACHE_PATH="$T/link" DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/in"
	assert_regex "$stderr" "is not private to user 0: $T/home \(owner 65534, mode 0755\) is another user's; not used"
	mkdir -m 0777 "$T/open"
	run --separate-stderr env DEBUGINFOD_CACHE_PATH="$T/open/c" DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" --no-cache "$T/in"
	assert_equal "$stderr" "offsample-symbolize: debuginfod: the cache $T/open/c is not private to user 0: $T/open (owner 0, mode 0777) is writable by others; not used (DEBUGINFOD_CACHE_PATH chooses another)"
	[ ! -e "$T/open/c" ] || false
	assert_equal "$(connections "$T/conn.log")" 0
	kill "$LISTENER_PID"
	# Sticky and writable by all (/tmp), the cache root's own: used.
	mkdir -m 1777 "$T/sticky"
	run --separate-stderr env DEBUGINFOD_CACHE_PATH="$T/sticky/c" DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	run -0 stat -c '%u %a' "$T/sticky/c"
	assert_output '0 700'
}

@test "debuginfod: a soft file-size limit below DEBUGINFOD_MAXSIZE, or a hard one, is kept: the file is still fetched when it fits" {
	need_debuginfod
	local how size
	size=$(stat -c %s "$S/prog.debug")
	mkstacks "$T/in" "$V/e/prog"
	for how in debuginfod-find curl; do
		rm -rf "$T/dfd-cache"
		# Hard limit 4x the file, below 1 GiB (DEBUGINFOD_MAXSIZE's
		# default): it cannot be raised to that.
		run --separate-stderr sh -c 'ulimit -f "$1" && ulimit -Hf "$1" && shift && exec "$@"' sh $((4 * size / 512)) \
			env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="$DFD" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
	done
}

@test "debuginfod: ima: tokens in DEBUGINFOD_URLS (elfutils 0.190+) are no URLs; servers under ima:enforcing are asked only through a debuginfod-find that checks signatures" {
	need_debuginfod
	local how n hows='curl perl' v
	mkstacks "$T/in" "$V/e/prog"
	# An elfutils before 0.190 takes the tokens for URLs: it is given
	# the URLs alone, and never a server under ima:enforcing.
	v=$(debuginfod-find --version | sed -n 's/.*(elfutils) 0\.\([0-9]*\).*/\1/p')
	[ "$v" -ge 190 ] || hows+=' debuginfod-find'
	for how in $hows; do
		rm -rf "$T/dfd-cache"
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="ima:permissive $DFD" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(ustacks <<< "$output")" "$(named prog)"
		rm -rf "$T/dfd-cache"
		n=$(debuginfo_requests)
		run --separate-stderr env OFFSAMPLE_DEBUGINFOD_CLIENT=$how DEBUGINFOD_URLS="ima:enforcing $DFD" "$SYM" --no-cache "$T/in"
		assert_success
		assert_equal "$stderr" "offsample-symbolize: debuginfod: $DFD not asked: ima:enforcing in DEBUGINFOD_URLS asks for signed files, which only debuginfod-find (elfutils 0.190 or later) checks"
		assert_equal "$(ustacks <<< "$output")" "$(ustack "$V/e/prog")"
		assert_equal "$(debuginfo_requests)" "$n"
		[ ! -e "$T/dfd-cache/$BUILDID/debuginfo" ] || false
	done
	# Tokens alone are no server.
	run --separate-stderr "$SYM" --debuginfod ima:ignore "$T/in"
	assert_failure 2
	assert_equal "$stderr" "offsample-symbolize: --debuginfod needs a URL"
}

@test "a build-id longer than 64 bytes is taken as none: not asked for, cached by path" {
	listener "$T/conn.log"
	(cd "$S" && gcc -O1 -g -Wl,--build-id=0x$(printf 'ab%.0s' $(seq 80)) -o "$T/longid" dbg.c && strip "$T/longid")
	readelf -nW "$T/longid" | grep -q "Build ID: $(printf 'ab%.0s' $(seq 80))" || false
	{ header; fileline "$T/longid"; printf '1\tsleep\tS\t10\t11\tprog\tprog-w\t%s\t%s\tclock_nanosleep\t/test.slice\n' "$KST" "$T/longid+0x1040"; } > "$T/in"
	run --separate-stderr env DEBUGINFOD_URLS="$LURL" DEBUGINFOD_TIMEOUT=1 "$SYM" "$T/in"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(connections "$T/conn.log")" 0
	run -0 ls "$T/cache/syms"
	assert_output --regexp '^path-[0-9a-f]{32}-[0-9]+-[0-9]+$'
}
