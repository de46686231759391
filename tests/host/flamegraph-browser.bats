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
