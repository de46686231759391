#!/usr/bin/env bats
# Stripped programs named through each route of separate debug
# information, with the module loaded: four copies of
# tests/workload/offsample-dbg.c, built and stripped as distributions
# ship programs (tests/workload/mk-dbg.sh), each with its names in one
# place only: the build-id directory, a .gnu_debuglink file beside it,
# MiniDebugInfo (.gnu_debugdata), a real debuginfod server (Debian's,
# started here on 127.0.0.1).  Every function of each, static ones too,
# must be named in the folded output of `offsample record`, in the order
# eu-stack (elfutils, reading the same debug information) gives.  The
# share of user frames with a name before and after goes to the
# artifacts (debuginfo-share-KREL.txt).
#
# Kernels: one (file tag once-2): what is new here is the tools'; the
# module walks these programs like any other (55-user, 56-cfi on every
# kernel).
# bats file_tags=once-2

load lib

OFFS=$TOP/tools/offsample
SYM=$TOP/tools/offsample-symbolize
D=$TOP/build/dbg
PROGS='buildid/offs-dbg-bid link/offs-dbg-link mini/offs-dbg-mini dfd/offs-dbg-dfd'
WANT='main;dbg_top;dbg_static_caller;dbg_middle;dbg_static_leaf'

setup_file() {
	load lib
	offs_load hz=19
}

teardown_file() {
	load lib
	offs_unload
}

setup() {
	T=$BATS_TEST_TMPDIR
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# start_dfd: Debian's debuginfod on a free loopback port over D/served,
# one scan, database in memory; DFD its URL once the scan is done.
start_dfd() {
	local port i
	port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport')
	debuginfod -F -d :memory: -p "$port" -t 0 -g 0 -c 1 "$D/served" > "$T/debuginfod.log" 2>&1 3>&- &
	PIDS+=($!)
	DFD=http://127.0.0.1:$port
	for i in $(seq 600); do
		curl -s "$DFD/metrics" | grep -q '^thread_work_total{role="traverse"} 1' && return 0
		sleep 0.1
	done
	cat "$T/debuginfod.log" >&2
	return 1
}

# names FOLDED COMM: the program's own frames (main, dbg_*) of COMM's
# line, root first.
names() {
	awk -v c="$2" '{ split($1, f, ";") } f[2] == c {
		s = ""; n = split($0, f, ";")
		for (i = 1; i <= n; i++) { sub(/ [0-9]+$/, "", f[i]); if (f[i] ~ /^(main|dbg_[a-z_]+)$/) s = s (s == "" ? "" : ";") f[i] }
		print s }' "$1" | sort -u
}

@test "stripped programs: every function named through the build-id directory, .gnu_debuglink, MiniDebugInfo and a real debuginfod server, as eu-stack names them" {
	[ -f "$D/.made" ] || fail "build/dbg not built (make workload: gcc, binutils, xz)"
	local p c pid out
	start_dfd
	for p in $PROGS; do
		"$D/$p" > "$T/${p#*/}.out" 2>&1 3>&- &
		PIDS+=($!)
		wait_line "$T/${p#*/}.out" '^ready [0-9]+$' 600 "$!" > /dev/null
	done
	# eu-stack, from the same debug information and server.
	for p in $PROGS; do
		pid=$(awk '/^ready/ { print $2 }' "$T/${p#*/}.out")
		DEBUGINFOD_URLS=$DFD DEBUGINFOD_CACHE_PATH=$T/eu-cache \
			eu-stack -p "$pid" --debuginfo-path=":.debug:$D/debugroot" > "$T/${p#*/}.eu" 2>&1 || true
		out=$(awk '$3 ~ /^(main|dbg_[a-z_]+)$/ { print $3 }' "$T/${p#*/}.eu" | tac | paste -sd';')
		assert_equal "${p#*/} by eu-stack: $out" "${p#*/} by eu-stack: $WANT"
	done
	run --separate-stderr "$OFFS" record -d 4 -o "$T/dbg.stacks"
	assert_success
	assert_equal "$stderr" ""
	cp "$T/dbg.stacks" "$ARTIFACTS/debuginfo-$KREL.stacks" 2>/dev/null || true
	# Naming reads the files, not the processes.
	for pid in "${PIDS[@]:1}"; do kill -KILL "$pid"; done
	# Before: no debug directory, no server (the symbol cache is keyed by
	# the debug sources there are, so it cannot answer for after).  The
	# .gnu_debuglink file beside its program and the MiniDebugInfo in
	# its program still name those two: no option turns them off.
	"$SYM" --no-debuginfod --debug-dir "$T/none" < "$T/dbg.stacks" > "$T/before"
	"$OFFS" collapse --user-only "$T/before" > "$T/before.folded"
	for c in offs-dbg-bid offs-dbg-dfd; do
		assert_equal "$c before: $(names "$T/before.folded" "$c")" "$c before: "
	done
	# After: each route.
	run --separate-stderr env DEBUGINFOD_CACHE_PATH="$T/dfd-cache" \
		"$SYM" --debug-dir "$D/debugroot" --debuginfod "$DFD" "$T/dbg.stacks"
	assert_success
	assert_equal "$stderr" ""
	printf '%s\n' "$output" > "$T/after"
	"$OFFS" collapse --user-only "$T/after" > "$T/after.folded"
	cp "$T/after.folded" "$ARTIFACTS/debuginfo-$KREL.folded" 2>/dev/null || true
	for p in $PROGS; do
		c=${p#*/}
		assert_equal "$c: $(names "$T/after.folded" "$c")" "$c: $WANT"
		echo "$c ($KREL): named user frames, weighted by samples: before $(share "$T/before" "$c"), after $(share "$T/after" "$c")" |
			tee -a "$ARTIFACTS/debuginfo-share-$KREL.txt"
	done
	# Fetched through the server into the client's cache.
	run -0 find "$T/dfd-cache" -name debuginfo -size +0
	assert_equal "${#lines[@]}" 1
}
