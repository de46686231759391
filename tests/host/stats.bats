#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# /proc/offsample/stats from its sources: every counter of struct
# offs_stats (module/stats.h) is printed by module/stats.c under its own
# field name, or listed there as internal; every name the file prints is
# documented in docs/FORMAT.md, and the reverse.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
}

# The struct's fields, "u64 NAME" or "atomic64_t NAME" (arrays: NAME[]).
fields() {
	perl -ne 'if (/^struct offs_stats \{/ .. /^\};/) {
		print "$1 $2", ($3 ? "[]" : ""), "\n" if /^\t(u64|atomic64_t) (\w+)(\[\w+\])?;/ }' \
		"$ROOT/module/stats.h" | sort
}

# What the printer prints from the struct, in the same form.
printed() {
	perl -ne 'next if /^#define/ || m{^\s*(/\*|\*)};
		print "u64 $1\n" while /OFFS_SHOW_U64\((\w+)\)/g;
		print "atomic64_t $1\n" while /OFFS_SHOW_ATOMIC\((\w+)\)/g;
		print "u64 $1_reason[]\n" while /OFFS_SHOW_REASONS\((\w+)\)/g;' \
		"$ROOT/module/stats.c"
}

internal() {
	sed -n 's/^ \*   internal: //p' "$ROOT/module/stats.c" | tr ' ' '\n' | sed '/^$/d'
}

# Every name the file prints: counters, values, FIELD_<reason>.
names() {
	perl -ne 'next if /^#define/ || m{^\s*(/\*|\*)};
		print "$1\n" while /OFFS_SHOW_(?:U64|ATOMIC|VALUE)\((\w+)/g;
		print "cfi_$1\n" while /OFFS_SHOW_CFI\((\w+)\)/g;
		print "$1_<reason>\n" while /OFFS_SHOW_REASONS\((\w+)\)/g;' \
		"$ROOT/module/stats.c"
	echo version
}

@test "stats: every field is printed under its own name once, or is internal" {
	local f p i missing extra twice
	f=$(fields)
	p=$(printed)
	i=$(internal)
	[ -n "$f" ] && [ -n "$p" ] && [ -n "$i" ]
	twice=$(sort <<< "$p" | uniq -d)
	assert_equal "$twice" ""
	# The internal ones are u64 fields, and not printed.
	for n in $i; do
		grep -qx "u64 $n" <<< "$f" || fail "internal $n is not a u64 field of struct offs_stats"
		! grep -qx "u64 $n" <<< "$p" || fail "internal $n is printed"
	done
	missing=$(comm -23 <(echo "$f") <( { echo "$p"; sed 's/^/u64 /' <<< "$i"; } | sort))
	extra=$(comm -13 <(echo "$f") <(sort <<< "$p"))
	assert_equal "$missing" ""
	assert_equal "$extra" ""
}

@test "stats: every name printed is documented in docs/FORMAT.md, and every documented one is printed" {
	local doc n undoc=
	doc=$(sed -n '/^## \/proc\/offsample\/stats/,/^## /p' "$ROOT/docs/FORMAT.md" |
		grep '^| `' | cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' | sort -u)
	[ "$(wc -l <<< "$doc")" -gt 100 ]
	while read -r n; do
		grep -qxF "$n" <<< "$doc" || undoc="$undoc $n"
	done < <(names)
	assert_equal "${undoc# }" ""
	assert_equal "$(comm -23 <(echo "$doc") <(names | sort -u))" ""
}
