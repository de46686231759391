#!/usr/bin/env bats
# The time each guest of `make test` may run (tests/lib/guest-share.bash):
# on 2026-11-25 CI ran at half speed and both guests hit a fixed 1,500 s
# limit with 40 minutes of the 90 left unused.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

setup() {
	source "$BATS_TEST_DIRNAME/../lib/guest-share.bash"
}

@test "guest_share: two guests one at a time split what is left; the second gets what the first left" {
	# Run began at 1000, 4800 s budget, host part took 600 s.
	run -0 guest_share 1000 4800 1600 2 1
	assert_output 2040
	# The first guest took 1000 s of its 2040: the second gets the rest.
	run -0 guest_share 1000 4800 2600 1 1
	assert_output 3080
	# Slow machine: the first used all of its share.
	run -0 guest_share 1000 4800 3640 1 1
	assert_output 2040
}

@test "guest_share: guests at once share rounds; never under 300 s" {
	run -0 guest_share 0 4800 600 3 2
	assert_output 2040
	run -0 guest_share 0 4800 600 2 2
	assert_output 4080
	run -0 guest_share 0 4800 4700 1 1
	assert_output 300
	run -0 guest_share 0 4800 9000 2 0
	assert_output 300
}

@test "once_skip: each tools group runs in exactly one guest of the run" {
	run -0 once_skip 1/1
	assert_output ""
	run -0 once_skip 1/2
	assert_output "!once-2"
	run -0 once_skip 2/2
	assert_output "!once-1"
	run -0 once_skip 1/3
	assert_output "!once-2"
	run -0 once_skip 3/3
	assert_output "!once-1,!once-2"
	# Every group in exactly one guest, for 1 to 4 guests.
	local n k g hits
	for n in 1 2 3 4; do
		for g in 1 2; do
			hits=0
			for k in $(seq 1 $n); do
				[[ ,$(once_skip "$k/$n"), == *",!once-$g,"* ]] || hits=$((hits + 1))
			done
			assert_equal "$n guests, group $g: $hits" "$n guests, group $g: 1"
		done
	done
	run -1 once_skip 3/2
	assert_output --partial "guest 3 of 2"
	run -1 once_skip 0/2
	run -1 once_skip "1/2; rm -rf /"
	assert_output --partial "is not K/N"
}

@test "bats tags: tests/guest/run.sh's filter selects the tagged tests as planned" {
	local t=$BATS_TEST_TMPDIR/t.bats
	printf '%s\n' '@test "plain" { true; }' '# bats test_tags=once-1' '@test "g1" { true; }' \
		'# bats test_tags=once-2' '@test "g2" { true; }' > "$t"
	run -0 bats --tap --filter-tags "$(once_skip 1/2)" "$t"
	assert_output "$(printf '%s\n' 1..2 'ok 1 plain' 'ok 2 g1')"
	run -0 bats --tap --filter-tags "$(once_skip 2/2)" "$t"
	assert_output "$(printf '%s\n' 1..2 'ok 1 plain' 'ok 2 g2')"
	run -0 bats --tap --filter-tags "$(once_skip 3/3)" "$t"
	assert_output "$(printf '%s\n' 1..1 'ok 1 plain')"
	# Every once-tag in the guest suites is one of the two groups.
	run -0 bash -c "grep -ho 'test_tags=.*' '$BATS_TEST_DIRNAME'/../guest/*.bats | sort -u"
	assert_output "$(printf '%s\n' test_tags=once-1 test_tags=once-2)"
}

@test "guest suites: each says on which kernels it runs and why; a file tag once-N matches what it says" {
	local f bad=0 decl tag
	for f in "$BATS_TEST_DIRNAME"/../guest/*.bats; do
		decl=$(sed -n '/^load /q; s/^# Kernels: //p' "$f")
		tag=$(sed -n 's/^# bats file_tags=\(once-[0-9]*\)$/\1/p' "$f")
		case "$decl" in
		"every test kernel"*) [ -z "$tag" ] || { echo "$f: every kernel, but file tag $tag"; bad=1; } ;;
		"one (file tag once-"[12]*)
			[ "$tag" = "$(echo "$decl" | sed 's/^one (file tag \(once-[12]\).*/\1/')" ] ||
				{ echo "$f: says '$decl', file tag '${tag}'"; bad=1; } ;;
		"one, test by test"*)
			[ -z "$tag" ] && grep -q '^# bats test_tags=once-[12]$' "$f" ||
				{ echo "$f: test by test, but no test tagged once-N"; bad=1; } ;;
		*) echo "$f: no '# Kernels: every test kernel|one (file tag once-N|one, test by test' line with its reason, before 'load'"; bad=1 ;;
		esac
		# The reason follows on the same line.
		[ "$(echo "$decl" | wc -w)" -ge 4 ] || { echo "$f: no reason given"; bad=1; }
	done
	[ "$bad" = 0 ]
	# Both groups are used, so that both guests share the work.
	grep -l '^# bats file_tags=once-1$' "$BATS_TEST_DIRNAME"/../guest/*.bats > /dev/null
	grep -l '^# bats file_tags=once-2$' "$BATS_TEST_DIRNAME"/../guest/*.bats > /dev/null
}

@test "suite times: wall and busy CPU seconds per suite from tap-stamp's lines; '-' without CPU times" {
	local t=$BATS_TEST_TMPDIR/g.times
	printf '%s\n' '100.0 50.0 1..3' '100.4 50.2 # suite a.bats' '110.0 60.0 ok 1 one' \
		'130.5 90.4 not ok 2 two' '131.0 91.0 # suite b.bats' '140.0 92.0 ok 3 three' > "$t"
	run -0 awk -f "$BATS_TEST_DIRNAME/../lib/suite-times.awk" "$t"
	assert_output "$(printf '%s\n' 'a.bats 31 2 1 41' 'b.bats 9 1 0 1')"
	sed -i 's/^\([0-9.]*\) [0-9.]* /\1 - /' "$t"
	run -0 awk -f "$BATS_TEST_DIRNAME/../lib/suite-times.awk" "$t"
	assert_output "$(printf '%s\n' 'a.bats 31 2 1 -' 'b.bats 9 1 0 -')"
	# tap-stamp: the time, the busy CPU seconds (this machine's), the line.
	run -0 sh -c 'printf "ok 1 x\n" | "$1"' sh "$BATS_TEST_DIRNAME/../lib/tap-stamp"
	assert_output --regexp '^[0-9]+\.[0-9] [0-9]+\.[0-9] ok 1 x$'
}

# acct_rec COMM UTIME_COMP STIME_COMP [VERSION]: one struct acct_v3 record.
acct_rec() {
	perl -e 'print pack("C C S L L L L L L f S S S S S S S S a16", 0, $ARGV[3] // 3, 0, 0, 0, 0, 1, 1, 0, 0.0, $ARGV[1], $ARGV[2], 0, 0, 0, 0, 0, 0, $ARGV[0])' "$@"
}

@test "acct-table: CPU seconds per program from accounting records, comp_t exponents decoded, most first" {
	local f=$BATS_TEST_TMPDIR/acct t=$BATS_TEST_DIRNAME/../lib/acct-table
	{
		acct_rec awk 150 50		# 1.5 + 0.5
		acct_rec awk 100 0		# 1.0
		# comp_t 0x2010: mantissa 16, exponent 1: 16 << 3 = 128 ticks
		acct_rec bash $((0x2010)) 2	# 1.28 + 0.02
		acct_rec tiny 10 0		# 0.1: under --min, counted in the total
		acct_rec old 500 0 2		# version 2: not read
	} > "$f"
	run -0 "$t" "$f"
	assert_line --index 0 --regexp '^command +cpu_s +user_s +sys_s +procs$'
	assert_line --index 1 --regexp '^awk +3\.0 +2\.5 +0\.5 +2$'
	assert_line --index 2 --regexp '^bash +1\.3 +1\.3 +0\.0 +1$'
	assert_line --index 3 --regexp '^total +4\.4 +3\.9 +0\.5 +4$'
	[ "${#lines[@]}" -eq 4 ]
	run -0 "$t" --min 0 "$f"
	assert_line --regexp '^tiny +0\.1 '
	refute_line --regexp '^old '
}

@test "acct-table: a missing file or one without records is exit 1 with a message; a bad option is 2" {
	local t=$BATS_TEST_DIRNAME/../lib/acct-table
	run -1 "$t" "$BATS_TEST_TMPDIR/none"
	assert_output --partial 'acct-table: '
	: > "$BATS_TEST_TMPDIR/empty"
	run -1 "$t" "$BATS_TEST_TMPDIR/empty"
	assert_output --partial 'no version 3 accounting record'
	run -2 "$t" --min x "$BATS_TEST_TMPDIR/empty"
	run -2 "$t"
}
