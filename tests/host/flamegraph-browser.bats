#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# offsample-flamegraph SVGs in a real browser: Debian's chromium driven by
# playwright-core (tests/browser/flamegraph.js).  Needs
#   tests/lib/deps.sh browser      (chromium, node, npm ci --prefix tests/browser)
# Missing pieces FAIL the test (CI installs them), they never skip it.
#
#   bats tests/host/flamegraph-browser.bats
#   ARTIFACT_DIR=/tmp/shots bats tests/host/flamegraph-browser.bats   # keep the PNGs

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	FG=$ROOT/flamegraph/offsample-flamegraph
	FIX=$ROOT/tests/fixtures/folded
	DRIVER=$ROOT/tests/browser/flamegraph.js
	command -v node >/dev/null ||
		fail "node not found: run tests/lib/deps.sh browser (as root)"
	[ -x "${CHROMIUM:-/usr/bin/chromium}" ] ||
		fail "${CHROMIUM:-/usr/bin/chromium} not found: run tests/lib/deps.sh browser (as root)"
	[ -f "$ROOT/tests/browser/node_modules/playwright-core/package.json" ] ||
		fail "playwright-core not installed: run tests/lib/deps.sh browser (npm ci --prefix tests/browser)"
}

# shots NAME: the artifact directory for one test
shots() {
	local d=${ARTIFACT_DIR:-$BATS_TEST_TMPDIR}/$1
	mkdir -p "$d"
	echo "$d"
}

@test "browser: hover, click zoom, Ctrl-F search, Reset Zoom, Reset Search" {
	"$FG" --title 'Browser test' "$FIX/browser.folded" > "$BATS_TEST_TMPDIR/fg.svg"
	dir=$(shots hot)
	# ext4_* frames: 40 + 10 + 30 of 100; vfs|ext4|<K, V>: vfs_read 50 and
	# vfs_write 30 contain the ext4 matches, plus 20: nothing counted twice
	ARTIFACT_DIR=$dir run node "$DRIVER" --svg "$BATS_TEST_TMPDIR/fg.svg" \
		--zoom read_file --sibling write_file --parent main \
		--search '^ext4_' --matched 80.0 \
		--search2 'vfs|ext4|<K, V>' --matched2 100.0
	assert_success
	assert_output --partial 'no page errors'
	assert_output --regexp '[0-9]+ checks passed'
	[ -s "$dir/flamegraph.png" ]
	[ -s "$dir/flamegraph-zoom-search.png" ]
}

@test "browser: offcpu palette graph, nested matches counted once" {
	"$FG" --colors=offcpu "$FIX/offcpu.folded" > "$BATS_TEST_TMPDIR/off.svg"
	dir=$(shots offcpu)
	# futex_wait 250 of 1905 contains __x64_sys_futex and futex_wait_queue
	ARTIFACT_DIR=$dir run node "$DRIVER" --svg "$BATS_TEST_TMPDIR/off.svg" \
		--zoom XLogFlush --sibling ExecScan --parent io \
		--search futex --matched 13.1 \
		--search2 '^(io|lock)$' --matched2 44.6
	assert_success
	assert_output --partial 'no page errors'
	[ -s "$dir/flamegraph.png" ]
}

# speedscope_totals PROFILE: "name total" per function of speedscope's
# Sandwich view, sorted.
speedscope_totals() {
	node "$ROOT/tests/browser/speedscope.js" --profile "$1" |
		perl -MJSON::PP -ne '$r = decode_json($_); ($t = $r->{total}) =~ s/ .*//; $t =~ s/,//g; print "$r->{name} $t\n"' |
		sort
}
# stacks_totals FILE: the same computed from a stacks file: each record's
# count goes to every distinct function of its stack, kernel frames
# without offset and module, user frames by their symbolized name, else
# their file (or [vdso], [anon] ...).
stacks_totals() {
	awk -F'\t' '
	/^# columns:/ { n = split(substr($0, 12), c, " "); for (i = 1; i <= n; i++) col[c[i]] = i; next }
	/^#/ { next }
	{
		delete seen
		k = $(col["kstack"] ? col["kstack"] : 8)
		u = ("ustack" in col) ? $(col["ustack"]) : "-"
		nk = split(k, f, ";")
		for (i = 1; i <= nk; i++) {
			x = f[i]; sub(/\+0x[0-9a-f]+\/0x[0-9a-f]+/, "", x); sub(/ \[[^]]*\]$/, "", x)
			if (x != "" && !(x in seen)) { seen[x] = 1; t[x] += $1 }
		}
		if (u != "-") {
			nu = split(u, g, ";")
			for (i = 1; i <= nu; i++) {
				x = g[i]
				if (x ~ / \(.*\)$/) { sub(/\+0x[0-9a-f]+ \(.*\)$/, "", x) }
				else { sub(/\+0x[0-9a-f]+$/, "", x) }
				if (x != "" && !(x in seen)) { seen[x] = 1; t[x] += $1 }
			}
		}
	}
	END { for (x in t) print x, t[x] }' "$1" | sort
}

@test "browser: speedscope opens offsample pprof profiles; every function's total matches the input" {
	[ -f "$ROOT/tests/browser/node_modules/speedscope/dist/release/index.html" ] ||
		fail "speedscope not installed: run tests/lib/deps.sh browser (npm ci --prefix tests/browser)"
	local f p
	for f in "$ROOT/tests/fixtures/tools/small-v1.stacks" "$ROOT/tests/fixtures/tools/v2-small.stacks"; do
		p=$BATS_TEST_TMPDIR/$(basename "$f" .stacks).pb.gz
		OFFSAMPLE_PROC=$BATS_TEST_TMPDIR/none "$ROOT/tools/offsample" pprof -o "$p" "$f"
		export ARTIFACT_DIR=$(shots "speedscope-$(basename "$f" .stacks)")
		run -0 speedscope_totals "$p"
		assert_equal "$output" "$(stacks_totals "$f")"
	done
	# Spot checks, so that the comparison cannot pass empty.
	assert_line "cache_get 60"
	assert_line "__schedule 100"
	assert_line "/opt/offsample-fixture/bin/app 25"
}

@test "browser: the wait-for graph (offsample blockers --graph, Graphviz) shows every thread and wait, the deadlock in red" {
	local svg=$BATS_TEST_TMPDIR/waits.svg
	OFFSAMPLE_PROC=$BATS_TEST_TMPDIR/none "$ROOT/tools/offsample" blockers --graph --no-symbolize \
		-o "$svg" "$ROOT/tests/fixtures/stacks/blockers-drain-6.12.117.txt"
	export ARTIFACT_DIR=$(shots waitgraph)
	run -0 node "$ROOT/tests/browser/waitgraph.js" --svg "$svg" --nodes 14 --edges 9 \
		--edge e373_374_mutex --color '#c0392b' --label 'blk-chain-c (363)'
	assert_line 'ok - no page errors'
}
