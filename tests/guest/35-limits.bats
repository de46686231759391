#!/usr/bin/env bats
# Bounds: a table too small for the load drops samples visibly and stays
# consistent; depth cap; kernel threads excluded on request; key fields.
#
# Kernels: one (file tag once-1: make test runs it in one guest only,
# tests/guest/run.sh): table sizing, the depth cap and key
# fields are the module's own bookkeeping, the same on every kernel.
# bats file_tags=once-1

load lib

teardown_file() {
	load lib
	offs_unload
}

@test "max_stacks too small: drops are counted, output stays consistent" {
	offs_load hz=19 max_stacks=16
	sleep 3
	echo 0 > $PARAM/enabled
	f=$BATS_TEST_TMPDIR/s
	cat $P/stacks > "$f"
	[ "$(stat_get dropped)" -gt 0 ]
	[ "$(stat_get dropped_table_full)" -gt 0 ]
	[ "$(stat_get stacks_unique)" -le 16 ]
	[ "$(hdr_get records "$f")" -le 16 ]
	assert_equal "$(grep -vc '^#' "$f")" "$(hdr_get records "$f")"
	[ "$(hdr_get dropped "$f")" -gt 0 ]
	assert_equal "$(hdr_get samples "$f")" "$(sum_counts "$f")"
	# Every visited off-CPU thread is either a sample or a counted drop.
	assert_equal "$(stat_get offcpu)" $(( $(stat_get samples) + $(stat_get dropped) ))
	run -0 grep '^# dropped_by_reason: ' "$f"
}

@test "max_depth caps stacks and marks them truncated" {
	offs_load hz=19 max_depth=3
	sleep 2
	f=$BATS_TEST_TMPDIR/s
	cat $P/stacks > "$f"
	[ "$(stat_get stacks_truncated)" -gt 0 ]
	run -0 awk -F'\t' '!/^#/ { n = split($8, fr, ";"); if (fr[n] == "[truncated]") n--; if (n > 3) bad++; t += (fr[split($8, fr, ";")] == "[truncated]") }
		END { exit bad > 0 || t == 0 }' "$f"
}

@test "kthreads=0 samples no kernel threads" {
	offs_load hz=19 kthreads=0
	sleep 2
	[ "$(stat_get kthreads_skipped)" -gt 0 ]
	cat $P/stacks > "$BATS_TEST_TMPDIR/s"
	# The comm column (6th): a kernel stack may begin with rcu_core()
	# and the like in a user thread's on-CPU sample (softirq).
	run -0 awk -F'\t' '!/^#/ && $6 ~ /^(kworker\/|ksoftirqd\/|rcu_|kthreadd$)/' "$BATS_TEST_TMPDIR/s"
	assert_output ""
	run -0 awk -F'\t' '!/^#/ && $2 == "idle"' "$BATS_TEST_TMPDIR/s"
	assert_output ""
}

@test "key=pid,tid,tname splits records by thread" {
	offs_load hz=19 key=pid,tid,tname
	sleep 2
	f=$BATS_TEST_TMPDIR/s
	cat $P/drain > "$f"	# exact: the live file may be a tick ahead of its header
	assert_equal "$(hdr_get key "$f")" comm,pid,tid,tname
	# pid, tid and tname are filled in on every record, and no thread has
	# more samples than ticks for any (reason, state, stack).
	run -0 awk -F'\t' '!/^#/ { if ($4 !~ /^[0-9]+$/ || $5 !~ /^[0-9]+$/ || $7 == "-") bad++ } END { exit bad > 0 }' "$f"
	ticks=$(hdr_get ticks "$f")
	run -0 awk -F'\t' -v t="$ticks" '!/^#/ && $1 > t { bad++ } END { exit bad > 0 }' "$f"
	# init (pid 1) appears as itself.
	run -0 awk -F'\t' '!/^#/ && $4 == 1 && $5 == 1 { found++ } END { exit !found }' "$f"
}
