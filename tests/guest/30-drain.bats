#!/usr/bin/env bats
# Consecutive drains partition the samples: nothing lost, nothing counted
# twice.
#
# Kernels: one (file tag once-2: make test runs it in its second
# guest only, tests/guest/run.sh): what is tested is the module's own
# parsing and generation bookkeeping, through interfaces (module
# parameters, seq_file) that are the same on every kernel we test.
# bats file_tags=once-2

load lib

setup_file() {
	load lib
	offs_load hz=19
}

teardown_file() {
	load lib
	offs_unload
}

@test "two drains plus what remains sum to the sampler's own total" {
	d=$BATS_TEST_TMPDIR
	sleep 2
	cat $P/drain > "$d/d1"
	sleep 2
	cat $P/drain > "$d/d2"
	sleep 1
	echo 0 > $PARAM/enabled		# returns once no tick is in progress
	cat $P/stacks > "$d/rest"
	total=$(stat_get samples)
	s1=$(sum_counts "$d/d1"); s2=$(sum_counts "$d/d2"); s3=$(sum_counts "$d/rest")
	echo "d1=$s1 d2=$s2 rest=$s3 total=$total"
	[ "$s1" -gt 0 ] && [ "$s2" -gt 0 ] && [ "$s3" -gt 0 ]
	assert_equal $((s1 + s2 + s3)) "$total"
	# Each part's header agrees with its records; generations are consecutive.
	for f in d1 d2 rest; do
		assert_equal "$(hdr_get samples "$d/$f")" "$(sum_counts "$d/$f")"
	done
	g1=$(hdr_get generation "$d/d1")
	assert_equal "$(hdr_get generation "$d/d2")" $((g1 + 1))
	assert_equal "$(hdr_get generation "$d/rest")" $((g1 + 2))
	assert_equal "$(hdr_get source "$d/rest")" stacks
	ticks=$(( $(hdr_get ticks "$d/d1") + $(hdr_get ticks "$d/d2") + $(hdr_get ticks "$d/rest") ))
	assert_equal "$ticks" "$(stat_get ticks)"
	echo 1 > $PARAM/enabled
}

@test "two drains at once get disjoint generations" {
	sleep 1
	local pa pb
	cat $P/drain > "$BATS_TEST_TMPDIR/a" &
	pa=$!
	cat $P/drain > "$BATS_TEST_TMPDIR/b" &
	pb=$!
	# Not a bare wait: bats' per-test timeout watchdog is a child too.
	wait $pa $pb
	ga=$(hdr_get generation "$BATS_TEST_TMPDIR/a")
	gb=$(hdr_get generation "$BATS_TEST_TMPDIR/b")
	[ "$ga" != "$gb" ]
}

@test "reads in small pieces equal one read; a drain returns what stacks showed" {
	d=$BATS_TEST_TMPDIR
	sleep 1
	echo 0 > $PARAM/enabled
	cat $P/stacks > "$d/s1"
	dd if=$P/stacks bs=13 status=none > "$d/s2"
	dd if=$P/drain bs=7 status=none > "$d/small"
	echo 1 > $PARAM/enabled
	strip() { grep -v -e '^# end' -e '^# duration' -e '^# source' "$1"; }
	[ "$(sum_counts "$d/s1")" -gt 0 ]
	run -0 diff <(strip "$d/s1") <(strip "$d/s2")
	run -0 diff <(strip "$d/s1") <(strip "$d/small")
	assert_equal "$(hdr_get source "$d/small")" drain
}
