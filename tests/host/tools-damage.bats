#!/usr/bin/env bats
# Every reading command refuses a stacks file cut short or damaged (its
# generations hold less than their headers say, a drain more, a last line
# cut), naming the file and what is wrong, exit 1; --force reads what is
# there with a warning.  The live stacks file may hold more than its
# header.  One exit-code convention: input of the wrong kind is 1, usage 2.

load tools-common

setup() {
	T=$BATS_TEST_TMPDIR
	# A real drain of the 6.1 guest: 20,945 samples in 119 records.
	F=$D61V2
	head -n 30 "$F" > "$T/cut.stacks"
	head -c 5000 "$F" > "$T/cutmid.stacks"
	CUT="$T/cut.stacks: cut short or damaged: generation 2 holds 1715 of its 20945 samples, 11 of its 119 records"
}

@test "damage: the fixture is whole, and what the cut files hold is what the messages say" {
	assert_equal "$(sed -n 's/^# samples: //p' "$F") $(sed -n 's/^# records: //p' "$F")" "20945 119"
	assert_equal "$(grep -vc '^#' "$T/cut.stacks")" 11
	assert_equal "$(awk -F'\t' '!/^#/ { s += $1 } END { print s }' "$T/cut.stacks")" 1715
	run -0 "$OFFS" report "$F"
	run -0 "$SCO" "$F"
}

@test "damage: every reading command refuses a file cut between lines, exit 1, one line naming it, nothing on stdout" {
	local c
	for c in report collapse flamegraph pprof blockers critical; do
		run --separate-stderr "$OFFS" "$c" "$T/cut.stacks"
		assert_failure 1
		assert_output ""
		assert_equal "$stderr" "offsample $c: $CUT (--force reads what is there)"
	done
	run --separate-stderr "$OFFS" diff "$F" "$T/cut.stacks"
	assert_failure 1
	assert_equal "$stderr" "offsample diff: $CUT (--force reads what is there)"
	run --separate-stderr "$SCO" "$T/cut.stacks"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "stackcollapse-offsample: $CUT (--force reads what is there)"
}

@test "damage: a file cut in the middle of a line, from a pipe or standard input, filtered or not" {
	run --separate-stderr "$OFFS" report "$T/cutmid.stacks"
	assert_failure 1
	assert_regex "$stderr" "^offsample report: $T/cutmid.stacks: cut short or damaged: generation 2 holds [0-9]+ of its 20945 samples, [0-9]+ of its 119 records"
	run --separate-stderr "$OFFS" report --force "$T/cutmid.stacks"
	assert_success
	assert_equal "${#stderr_lines[@]}" 2
	assert_equal "${stderr_lines[1]}" "offsample report: warning: $T/cutmid.stacks: cut short: its last line has no end (line $(( $(wc -l < "$T/cutmid.stacks") + 1 ))); reading what is there (--force)"
	# Standard input: named so.
	run --separate-stderr bash -c '"$0" report --reason io < "$1"' "$OFFS" "$T/cut.stacks"
	assert_failure 1
	assert_equal "$stderr" "offsample report: stdin: ${CUT#"$T/cut.stacks: "} (--force reads what is there)"
	# A filter does not hide it (the filtered file's header is recomputed).
	run --separate-stderr "$OFFS" collapse --reason sleep "$T/cut.stacks"
	assert_failure 1
	run --separate-stderr "$SCO" - < "$T/cut.stacks"
	assert_failure 1
	assert_equal "$stderr" "stackcollapse-offsample: standard input: ${CUT#"$T/cut.stacks: "} (--force reads what is there)"
}

@test "damage: --force reads what is there, with one warning per problem, and the counts are the file's" {
	run --separate-stderr "$OFFS" report --force --include-idle "$T/cut.stacks"
	assert_success
	assert_equal "$stderr" "offsample report: warning: $CUT; reading what is there (--force)"
	assert_line "# samples: 1715"
	run --separate-stderr "$OFFS" collapse --force "$T/cut.stacks"
	assert_success
	assert_equal "$stderr" "offsample collapse: warning: $CUT; reading what is there (--force)"
	assert_equal "$(awk '{ s += $NF } END { print s }' <<< "$output")" 1715
	run --separate-stderr "$SCO" --force "$T/cut.stacks"
	assert_success
	assert_equal "$stderr" "stackcollapse-offsample: warning: $CUT; reading what is there (--force)"
	run --separate-stderr "$OFFS" pprof --force -o "$T/p.pb.gz" "$T/cut.stacks"
	assert_success
	[ -s "$T/p.pb.gz" ]
}

@test "damage: a drain holding more than its exact header, or fewer blocker lines, is damaged too; the live file may be ahead" {
	# A record added to a drain.
	{ cat "$F"; grep -v '^#' "$F" | head -n1; } > "$T/more.stacks"
	run --separate-stderr "$OFFS" report "$T/more.stacks"
	assert_failure 1
	assert_regex "$stderr" "generation 2 holds 2[0-9]{4} samples where its header says 20945, 120 records where its header says 119"
	# The same as a live stacks file: the sampler counted on meanwhile.
	sed 's/^# source: drain$/# source: stacks/' "$T/more.stacks" > "$T/live.stacks"
	run --separate-stderr "$OFFS" report "$T/live.stacks"
	assert_success
	assert_equal "$stderr" ""
	# An edge line lost from a drain with blockers.
	local B=$SFIX/blockers-drain-6.12.117.txt n
	n=$(sed -n 's/^# blockers: //p' "$B")
	[ "$n" -gt 1 ]
	awk '/^# blocker: / && !done { done = 1; next } { print }' "$B" > "$T/edge.stacks"
	run --separate-stderr "$OFFS" blockers "$T/edge.stacks"
	assert_failure 1
	assert_regex "$stderr" "holds $((n - 1)) of its $n blocker lines"
	# A header cut before its columns line (format v2).
	head -n 8 "$F" > "$T/hdr.stacks"
	run --separate-stderr "$OFFS" report "$T/hdr.stacks"
	assert_failure 1
	assert_regex "$stderr" 'no "# columns:" line \(cut in its header\)'
}

@test "damage: concatenated files are checked generation by generation; whole inputs pass unchanged" {
	cat "$F" "$D612V2" > "$T/two.stacks"
	run --separate-stderr "$OFFS" report "$T/two.stacks"
	assert_success
	assert_equal "$stderr" ""
	cat "$D612V2" "$T/cut.stacks" > "$T/two-cut.stacks"
	run --separate-stderr "$OFFS" report "$T/two-cut.stacks"
	assert_failure 1
	assert_regex "$stderr" "two-cut.stacks: cut short or damaged: generation 2 holds 1715 of its 20945 samples"
}

@test "one exit-code convention: input of the wrong kind is 1 for every tool, usage errors 2" {
	printf 'a;b;c 3\n' > "$T/folded"
	run -1 "$ROOT/tools/offsample-symbolize" "$T/folded"
	run -1 "$FG" "$F"
	run -1 "$SCO" "$T/folded"
	run -1 "$OFFS" report "$T/folded"
	run -2 "$ROOT/tools/offsample-symbolize" --no-such-option
	run -2 "$FG" --no-such-option
	run -2 "$SCO" --no-such-option
	run -2 "$OFFS" report --no-such-option
}
