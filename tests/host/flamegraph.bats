#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# flamegraph/offsample-flamegraph: options, input handling, layout, colours.
#
#   bats tests/host/flamegraph.bats
#
# The SVG has one frame per line:
#   <g class="f" data-n=NAME data-c=COUNT><title>..</title><rect x y width
#   height fill .../><text ...>LABEL</text></g>
# and frames() below turns that into tab-separated fields.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	FG=$ROOT/flamegraph/offsample-flamegraph
	FIX=$ROOT/tests/fixtures/folded
	T=$BATS_TEST_TMPDIR
}

# frames SVG...: name count x y width fill label (tab separated, unescaped)
frames() {
	perl -ne '
		next unless m{^<g class="f" data-n="([^"]*)" data-c="([^"]*)"><title>.*?</title><rect x="([^"]*)" y="([^"]*)" width="([^"]*)" height="[^"]*" fill="([^"]*)"[^>]*/><text[^>]*>(.*?)</text></g>$};
		my @f = ($1, $2, $3, $4, $5, $6, $7);
		for (@f) {
			s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&apos;/\x27/g;
			s/&#9;/\t/g; s/&amp;/&/g;
		}
		print join("\t", @f), "\n";' "$@"
}

# field NAME FIELD SVG: the FIELD (2=count 3=x 4=y 5=width 6=fill 7=label)
# of the first frame called NAME
field() {
	frames "$3" | awk -F'\t' -v n="$1" -v f="$2" '$1 == n { print $f; exit }'
}

# titles SVG: the tooltips of the frames, unescaped
titles() {
	perl -ne 'print "$1\n" if m{^<g class="f"[^>]*><title>(.*?)</title>}' "$1" |
		sed -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&apos;/'"'"'/g; s/&amp;/\&/g'
}

render() {	# render OUT [OPTIONS...] < input; asserts success and valid XML
	local out=$1; shift
	run --separate-stderr "$FG" "$@"
	assert_success
	printf '%s\n' "$output" > "$out"
	xmllint --noout "$out"
}

# rgb(r,g,b) -> "r g b"
rgb() { echo "$1" | sed -E 's/rgb\(([0-9]+),([0-9]+),([0-9]+)\)/\1 \2 \3/'; }

# --------------------------------------------------------------- options

@test "--help prints usage on stdout and exits 0" {
	run --separate-stderr "$FG" --help
	assert_success
	assert_line --index 0 --partial 'Usage: offsample-flamegraph'
	assert_output --partial '--colors PALETTE'
	assert_output --partial 'offcpu'
	[ -z "$stderr" ]
}

@test "unknown option: exit 2, one line on stderr, nothing on stdout" {
	run --separate-stderr "$FG" --bogus < "$FIX/small.folded"
	assert_failure 2
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *'Unknown option: bogus'*"--help"* ]]
}

@test "invalid option values: exit 2 with a one-line message" {
	for bad in '--width=abc' '--width=15' '--colors=nope' '--minwidth=1px' \
		'--bgcolors=pink' '--factor=0' '--total=-1' '--co=x'; do
		run --separate-stderr "$FG" "$bad" < "$FIX/small.folded"
		assert_failure 2
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 1 ] || fail "$bad: $stderr"
	done
}

@test "--color, --colors X and --colors=X are the same option" {
	render "$T/a.svg" --colors=java < "$FIX/odd-names.folded"
	render "$T/b.svg" --colors java < "$FIX/odd-names.folded"
	render "$T/c.svg" --color=java < "$FIX/odd-names.folded"
	render "$T/d.svg" < "$FIX/odd-names.folded"
	cmp "$T/a.svg" "$T/b.svg"
	cmp "$T/a.svg" "$T/c.svg"
	run ! cmp -s "$T/a.svg" "$T/d.svg"
}

@test "--hash, --random, --cp and --pal_file are accepted and change nothing" {
	render "$T/a.svg" < "$FIX/small.folded"
	render "$T/b.svg" --hash --random --cp --pal_file=/nonexistent < "$FIX/small.folded"
	cmp "$T/a.svg" "$T/b.svg"
}

@test "every palette renders valid XML" {
	for p in hot mem io wakeup chain java js perl red green blue aqua \
		yellow purple orange offcpu; do
		render "$T/$p.svg" --colors=$p < "$FIX/odd-names.folded"
	done
	# different palettes give different colours
	run ! cmp -s "$T/hot.svg" "$T/blue.svg"
}

# ----------------------------------------------------------------- input

@test "empty input: error exit, empty stdout, message on stderr" {
	run --separate-stderr "$FG" < /dev/null
	assert_failure 1
	[ -z "$output" ]
	[[ $stderr == *'no stack counts found'* ]]
	run --separate-stderr "$FG" <<< $'\n  \n'
	assert_failure 1
	[ -z "$output" ]
}

@test "all-invalid input (garbage): not folded stacks, exit 1, empty stdout" {
	run --separate-stderr "$FG" <<< $'no count here\na;b x\n12\na;b -3\na;b 1e5'
	assert_failure 1
	[ -z "$output" ]
	[[ $stderr == *'offsample-flamegraph: ignored 5 lines with invalid format'* ]]
	[[ $stderr == *'input is not folded stacks: no line of the form "frame;frame COUNT"'* ]]
}

@test "a raw offsample stacks file is refused (exit 1), not drawn from its header numbers" {
	# Its "# start: 1700000000.000" line would otherwise be a stack.
	run --separate-stderr "$FG" "$ROOT/tests/fixtures/stacks/workload-drain-v2-6.1.0.txt"
	assert_failure 1
	[ -z "$output" ]
	[[ $stderr == *'workload-drain-v2-6.1.0.txt: an offsample stacks file, not folded stacks; collapse it first'* ]]
	run --separate-stderr "$FG" < "$ROOT/tests/fixtures/stacks/workload-drain-6.12.117.txt"
	assert_failure 1
	[[ $stderr == *'-: an offsample stacks file, not folded stacks'* ]]
}

@test "zero counts only: error exit, nothing written" {
	run --separate-stderr "$FG" <<< $'a;b 0\na;c 0'
	assert_failure 1
	[ -z "$output" ]
}

@test "malformed lines are skipped with a warning, the rest renders" {
	run --separate-stderr "$FG" <<< $'a;b 3\ngarbage\na;c 1\n;;; nope\n'
	assert_success
	[ "$stderr" = 'offsample-flamegraph: ignored 2 lines with invalid format' ]
	printf '%s\n' "$output" > "$T/o.svg"
	xmllint --noout "$T/o.svg"
	[ "$(field b 2 "$T/o.svg")" = 3 ]
	[ "$(field c 2 "$T/o.svg")" = 1 ]
}

@test "an unreadable file is an error and no partial SVG is written" {
	run --separate-stderr "$FG" "$FIX/small.folded" "$T/missing.folded"
	assert_failure 1
	[ -z "$output" ]
	[[ $stderr == *"cannot open '$T/missing.folded'"* ]]
}

@test "several files and - (stdin) are read in order and summed" {
	printf 'a;b 2\n' > "$T/1.folded"
	render "$T/o.svg" "$T/1.folded" - "$T/1.folded" <<< 'a;c 5'
	[ "$(field b 2 "$T/o.svg")" = 4 ]
	[ "$(field c 2 "$T/o.svg")" = 5 ]
	[ "$(field all 2 "$T/o.svg")" = 9 ]
}

@test "identical stacks on several lines are summed into one frame" {
	render "$T/o.svg" <<< $'a;b 2\na;c 1\na;b 2\na;b   3\r'
	[ "$(frames "$T/o.svg" | awk -F'\t' '$1 == "b"' | wc -l)" -eq 1 ]
	[ "$(field b 2 "$T/o.svg")" = 7 ]
	[ "$(field a 2 "$T/o.svg")" = 8 ]
	titles "$T/o.svg" | grep -Fx 'b (7 samples, 87.50%)'
}

@test "decimal counts and --factor" {
	render "$T/o.svg" --factor 2.5 <<< $'a;b 1.5\na;c 4'
	[ "$(field b 2 "$T/o.svg")" = 3.75 ]
	[ "$(field c 2 "$T/o.svg")" = 10 ]
	titles "$T/o.svg" | grep -Fx 'b (3.75 samples, 27.27%)'
}

@test "--seconds: tooltips and legend say times (s at 1 s and above, ms below), no count name" {
	render "$T/o.svg" --seconds --countname thread-seconds --colors=offcpu --minwidth 0 <<< $'io;a;b 0.052632\nio;a;c 2.5\nlock;d 1234.5'
	titles "$T/o.svg" | grep -Fx 'b (52.6 ms, 0.00%)'
	titles "$T/o.svg" | grep -Fx 'c (2.5 s, 0.20%)'
	titles "$T/o.svg" | grep -Fx 'd (1,234.5 s, 99.79%)'
	grep -qF '<g class="lg" data-r="io"><title>io: 2.55 s (0.21%)</title>' "$T/o.svg"
	grep -qF '<g class="lg" data-r="lock"><title>lock: 1,234.5 s (99.79%)</title>' "$T/o.svg"
	run ! grep -q 'thread-seconds' "$T/o.svg"
	# Widths are the weights, as without --seconds.
	[ "$(field c 2 "$T/o.svg")" = 2.5 ]
}

@test "odd frame names give well-formed XML and survive escaping" {
	render "$T/o.svg" < "$FIX/odd-names.folded"
	frames "$T/o.svg" | cut -f1 > "$T/names"
	grep -Fx 'do work' "$T/names"
	grep -Fx 'handle request' "$T/names"
	grep -Fx "esc<&>\"'" "$T/names"
	grep -Fx 'a&amp' "$T/names"		# literal text, escaped again
	grep -Fx 'ünïcödé_функция' "$T/names"
	grep -Fx '日本語の関数' "$T/names"
	grep -q 'data-n="tab&#9;here"' "$T/o.svg"	# a tab survives attribute parsing
	# the suffix is stripped from names, labels and tooltips
	grep -Fx 'vfs_read' "$T/names"
	grep -Fx 'java/lang/Thread.run' "$T/names"
	run ! grep -F '_[' "$T/o.svg"
	# separators are grey
	[ "$(field - 6 "$T/o.svg")" = 'rgb(200,200,200)' ]
	[ "$(field -- 6 "$T/o.svg")" = 'rgb(160,160,160)' ]
}

@test "a >500 character C++ symbol is complete in the tooltip, truncated in the label" {
	render "$T/o.svg" < "$FIX/odd-names.folded"
	long=$(grep -o 'std::__1::basic_string[^;]*' "$FIX/odd-names.folded" | sed 's/ [0-9]*$//')
	[ "${#long}" -gt 500 ]
	frames "$T/o.svg" | cut -f1 | grep -Fx -- "$long"
	titles "$T/o.svg" | grep -Fx -- "$long (12 samples, 24.49%)"
	label=$(frames "$T/o.svg" | awk -F'\t' -v n="$long" '$1 == n { print $7 }')
	width=$(field "$long" 5 "$T/o.svg")
	[[ $label == *.. ]]
	[[ $long == "${label%..}"* ]]
	# fits: at most width / (fontsize * fontwidth) characters
	[ "${#label}" -le "$(awk -v w="$width" 'BEGIN { print int(w / (12 * 0.59)) }')" ]
	[ "${#label}" -ge 10 ]
}

@test "invalid UTF-8 and control characters still give well-formed XML" {
	printf 'main;bad\xff\xfebytes;ctl\001x 3\nmain;ok 1\n' > "$T/bad.folded"
	render "$T/o.svg" "$T/bad.folded"
	frames "$T/o.svg" | cut -f1 | grep -Fx 'bad��bytes'
	frames "$T/o.svg" | cut -f1 | grep -Fx 'ctl�x'
}

# ---------------------------------------------------------------- layout

@test "widths are proportional to counts; the root spans the full width" {
	render "$T/o.svg" <<< $'a;b 30\na;c 10'
	wa=$(field a 5 "$T/o.svg"); wb=$(field b 5 "$T/o.svg"); wc=$(field c 5 "$T/o.svg")
	[ "$wa" = 1180.00 ]			# 1200 - 2 * 10 px padding
	[ "$(field all 5 "$T/o.svg")" = 1180.00 ]
	awk -v b="$wb" -v c="$wc" 'BEGIN { exit !(b / c > 2.99 && b / c < 3.01) }'
	awk -v a="$wa" -v b="$wb" -v c="$wc" 'BEGIN { d = a - b - c; exit !(d < 0.02 && d > -0.02) }'
	# siblings sorted by name, side by side, children start at the parent
	xa=$(field a 3 "$T/o.svg"); xb=$(field b 3 "$T/o.svg"); xc=$(field c 3 "$T/o.svg")
	[ "$xa" = 10.00 ]
	[ "$xb" = 10.00 ]
	awk -v x="$xc" -v b="$wb" 'BEGIN { d = x - 10 - b; exit !(d < 0.02 && d > -0.02) }'
	# --width
	render "$T/w.svg" --width 800 <<< $'a;b 30\na;c 10'
	[ "$(field a 5 "$T/w.svg")" = 780.00 ]
	[ "$(field b 5 "$T/w.svg")" = 585.00 ]
	grep -q '<svg [^>]*width="800"' "$T/w.svg"
}

@test "--height sets the frame height, --fonttype and --fontsize the font" {
	render "$T/o.svg" --height 24 --fonttype 'Courier <New>' --fontsize 10 <<< $'a;b 1'
	grep -q '<rect x="[^"]*" y="[^"]*" width="[^"]*" height="23.0"' "$T/o.svg"
	grep -q 'font-family="Courier &lt;New&gt;" font-size="10"' "$T/o.svg"
	ya=$(field a 4 "$T/o.svg"); yb=$(field b 4 "$T/o.svg")
	[ "$(awk -v a="$ya" -v b="$yb" 'BEGIN { print a - b }')" = 24 ]
}

@test "deterministic: the same input twice gives identical bytes" {
	for opts in '' '--colors=offcpu' '--colors=java --inverted' '--flamechart'; do
		"$FG" $opts "$FIX/offcpu.folded" > "$T/1.svg"
		"$FG" $opts "$FIX/offcpu.folded" > "$T/2.svg"
		cmp "$T/1.svg" "$T/2.svg"
	done
}

@test "stored layout of small.folded matches small.expected" {
	# After an intended rendering change, review and update with:
	#   flamegraph/offsample-flamegraph tests/fixtures/folded/small.folded |
	#     <frames() of this file> | cut -f1-5 > tests/fixtures/folded/small.expected
	render "$T/o.svg" "$FIX/small.folded"
	frames "$T/o.svg" | cut -f1-5 > "$T/got"
	diff -u "$FIX/small.expected" "$T/got"
}

@test "--minwidth omits narrow frames and their children" {
	printf 'a;big 10000\na;tiny;child 1\n' > "$T/in.folded"
	render "$T/def.svg" "$T/in.folded"		# 0.118 px >= 0.1 px
	frames "$T/def.svg" | cut -f1 | grep -Fx tiny
	frames "$T/def.svg" | cut -f1 | grep -Fx child
	render "$T/px.svg" --minwidth 1 "$T/in.folded"
	frames "$T/px.svg" | cut -f1 > "$T/px.names"
	run ! grep -Fx -e tiny -e child "$T/px.names"
	frames "$T/px.svg" | cut -f1 | grep -Fx big
	render "$T/pct.svg" --minwidth 0.5% "$T/in.folded"
	frames "$T/pct.svg" | cut -f1 > "$T/pct.names"
	run ! grep -Fx -e tiny -e child "$T/pct.names"
	render "$T/pct2.svg" --minwidth 0.001% "$T/in.folded"
	frames "$T/pct2.svg" | cut -f1 | grep -Fx child
}

@test "--inverted puts the root at the top and titles an icicle graph" {
	render "$T/n.svg" <<< 'a;b;c 1'
	render "$T/i.svg" --inverted <<< 'a;b;c 1'
	# normal: root lowest (largest y); inverted: root highest
	[ "$(frames "$T/n.svg" | sort -t$'\t' -k4,4n | cut -f1 | tr '\n' ' ')" = 'c b a all ' ]
	[ "$(frames "$T/i.svg" | sort -t$'\t' -k4,4n | cut -f1 | tr '\n' ' ')" = 'all a b c ' ]
	grep -q '>Icicle Graph</text>' "$T/i.svg"
	grep -q '>Flame Graph</text>' "$T/n.svg"
}

@test "--reverse makes the leaf the root" {
	render "$T/r.svg" --reverse <<< $'a;b;c 1\nx;b;c 2'
	[ "$(frames "$T/r.svg" | sort -t$'\t' -k4,4nr -k3,3n | cut -f1 | tr '\n' ' ')" = 'all c b a x ' ]
	[ "$(field c 2 "$T/r.svg")" = 3 ]
	[ "$(field b 2 "$T/r.svg")" = 3 ]
}

@test "--flamechart keeps input order and merges adjacent frames only" {
	printf 'a;x 1\na;x;q 1\na;y 2\na;x 4\n' > "$T/in.folded"
	render "$T/c.svg" --flamechart "$T/in.folded"
	[ "$(frames "$T/c.svg" | awk -F'\t' '$1 == "x" || $1 == "y"' | cut -f1,2 | tr '\t\n' ': ')" = 'x:2 y:2 x:4 ' ]
	grep -q '>Flame Chart</text>' "$T/c.svg"
	# a frame whose stack ended is not merged with a later child run
	printf 'a;b 1\na 2\na;b 1\n' > "$T/in2.folded"
	render "$T/c2.svg" --flamechart "$T/in2.folded"
	[ "$(frames "$T/c2.svg" | awk -F'\t' '$1 == "b" { print $3 }' | tr '\n' ' ')" = '10.00 895.00 ' ]
	# the normal graph merges and sorts
	render "$T/g.svg" "$T/in.folded"
	[ "$(frames "$T/g.svg" | awk -F'\t' '$1 == "x" || $1 == "y"' | cut -f1,2 | tr '\t\n' ': ')" = 'x:6 y:2 ' ]
}

@test "--total scales percentages and widths when larger than the sum" {
	render "$T/o.svg" --total 100 <<< $'a;b 30\na;c 10'
	[ "$(field a 5 "$T/o.svg")" = 472.00 ]
	titles "$T/o.svg" | grep -Fx 'b (30 samples, 30.00%)'
	run --separate-stderr "$FG" --total 5 <<< 'a;b 30'
	assert_success
	[[ $stderr == *'--total 5 is less than'* ]]
}

@test "--title, --subtitle, --countname, --nametype and --notes appear, escaped" {
	render "$T/o.svg" --title 'Off-CPU <db> & co' --subtitle 'host "x"' \
		--countname 'µs' --nametype 'Frame:' --notes 'run 42 <ok>' <<< $'a;b 1500\na;c 500'
	grep -q '<text id="title"[^>]*>Off-CPU &lt;db&gt; &amp; co</text>' "$T/o.svg"
	grep -q '<text id="subtitle"[^>]*>host &quot;x&quot;</text>' "$T/o.svg"
	grep -q '<desc id="notes">run 42 &lt;ok&gt;</desc>' "$T/o.svg"
	grep -q '<text id="nametype"[^>]*>Frame:</text>' "$T/o.svg"
	titles "$T/o.svg" | grep -Fx 'b (1,500 µs, 75.00%)'
	run ! grep -q samples "$T/o.svg"
}

# --------------------------------------------------------------- colours

@test "differential input: grown frames red, shrunk frames blue, --negate swaps" {
	printf 'a;grow 10 30\na;shrink 20 5\na;same 5 5\n' > "$T/d.folded"
	render "$T/d.svg" "$T/d.folded"
	read -r r g b <<< "$(rgb "$(field grow 6 "$T/d.svg")")"
	[ "$r" -eq 255 ]
	[ "$g" -lt 255 ]
	[ "$g" -eq "$b" ]
	read -r r g b <<< "$(rgb "$(field shrink 6 "$T/d.svg")")"
	[ "$b" -eq 255 ]
	[ "$r" -lt 255 ]
	[ "$r" -eq "$g" ]
	[ "$(field same 6 "$T/d.svg")" = 'rgb(255,255,255)' ]
	# widths follow the second column
	[ "$(field grow 2 "$T/d.svg")" = 30 ]
	titles "$T/d.svg" | grep -Fx 'grow (30 samples, 75.00%; +50.00%)'
	render "$T/n.svg" --negate "$T/d.folded"
	read -r r g b <<< "$(rgb "$(field grow 6 "$T/n.svg")")"
	[ "$b" -eq 255 ]
	[ "$r" -lt 255 ]
	read -r r g b <<< "$(rgb "$(field shrink 6 "$T/n.svg")")"
	[ "$r" -eq 255 ]
	[ "$b" -lt 255 ]
}

@test "java palette: _[k] orange, _[j] green, suffix stripped" {
	render "$T/o.svg" --colors=java <<< $'main;Foo.bar_[j];vfs_read_[k] 1\nmain;Foo.bar_[i] 1'
	read -r r g b <<< "$(rgb "$(field vfs_read 6 "$T/o.svg")")"
	[ "$b" -eq 0 ]
	[ "$r" -gt "$g" ]			# orange
	# Foo.bar_[i] and Foo.bar_[j] stay distinct frames (sorted in that order)
	frames "$T/o.svg" | awk -F'\t' '$1 == "Foo.bar" { print $6 }' > "$T/fills"
	[ "$(wc -l < "$T/fills")" -eq 2 ]
	read -r r g b <<< "$(rgb "$(sed -n 1p "$T/fills")")"
	[ "$g" -eq "$b" ]
	[ "$g" -gt "$r" ]			# _[i]: aqua
	read -r r g b <<< "$(rgb "$(sed -n 2p "$T/fills")")"
	[ "$g" -gt "$r" ]
	[ "$g" -gt "$b" ]			# _[j]: green
}

@test "offcpu palette: legend, reason hues, kernel darker than user" {
	render "$T/o.svg" --colors=offcpu < "$FIX/offcpu.folded"
	# legend: the reasons present, in the fixed order, with their share
	perl -ne 'print "$1\n" if m{<g class="lg" data-r="(\w+)"}' "$T/o.svg" | tr '\n' ' ' > "$T/legend"
	[ "$(cat "$T/legend")" = 'io lock sched sleep net ipc fault stopped idle other cpu ' ]
	grep -q '<text [^>]*>io 31.5%</text>' "$T/o.svg"		# 600 / 1905
	grep -q '<text [^>]*>stopped 0.8%</text>' "$T/o.svg"	# 15 / 1905
	# io: the kernel frame vfs_read_[k] is darker than the user frame pread64
	read -r kr kg kb <<< "$(rgb "$(field vfs_read 6 "$T/o.svg")")"
	read -r ur ug ub <<< "$(rgb "$(field pread64 6 "$T/o.svg")")"
	[ $((kr + kg + kb)) -lt $((ur + ug + ub - 60)) ]
	[ "$kb" -gt "$kr" ]
	[ "$ub" -gt "$ur" ]		# both blue
	# lock: red hue, kernel darker too
	read -r kr kg kb <<< "$(rgb "$(field futex_wait_queue 6 "$T/o.svg")")"
	read -r ur ug ub <<< "$(rgb "$(field PGSemaphoreLock 6 "$T/o.svg")")"
	[ "$kr" -gt "$kb" ]
	[ "$ur" -gt "$ub" ]
	[ $((kr + kg + kb)) -lt $((ur + ug + ub - 60)) ]
	# the reason frame itself: saturated, differs from its user frames
	[ "$(field io 6 "$T/o.svg")" != "$(field ExecScan 6 "$T/o.svg")" ]
	read -r r g b <<< "$(rgb "$(field io 6 "$T/o.svg")")"
	[ $((b - r)) -gt 120 ]
	# _[k] stripped everywhere
	run ! grep -F '_[k]' "$T/o.svg"
	frames "$T/o.svg" | cut -f7 | grep -Fx io_schedule
	# light neutral background by default
	grep -q 'stop-color="#f8f8f6"' "$T/o.svg"
}

@test "offcpu palette: stacks whose root is not a reason are 'other'" {
	render "$T/o.svg" --colors=offcpu <<< $'io;read 3\nmain;work 1'
	[ "$(perl -ne 'print "$1 " if m{<g class="lg" data-r="(\w+)"}' "$T/o.svg")" = 'io other ' ]
	grep -q '>other 25.0%</text>' "$T/o.svg"
	# the "other" teal: green and blue above red
	read -r r g b <<< "$(rgb "$(field work 6 "$T/o.svg")")"
	[ "$g" -gt "$r" ]
	[ "$b" -gt "$r" ]
}

@test "offcpu --reverse: a shared frame takes the colour of its main reason" {
	render "$T/o.svg" --colors=offcpu --reverse <<< $'io;x;shared_[k] 10\nlock;y;shared_[k] 3'
	# shared is now the first frame above "all", it has both reasons
	[ "$(field shared 2 "$T/o.svg")" = 13 ]
	read -r r g b <<< "$(rgb "$(field shared 6 "$T/o.svg")")"
	[ "$b" -gt "$r" ]				# io (blue), not lock
	render "$T/p.svg" --colors=offcpu --reverse <<< $'io;x;shared_[k] 3\nlock;y;shared_[k] 10'
	read -r r g b <<< "$(rgb "$(field shared 6 "$T/p.svg")")"
	[ "$r" -gt "$b" ]				# lock (red)
	# the reason frames, now leaves, keep their saturated colour
	[ "$(field io 6 "$T/o.svg")" = "$(field io 6 "$T/p.svg")" ]
	render "$T/n.svg" --colors=offcpu <<< $'io;x;shared_[k] 10\nlock;y;shared_[k] 3'
	[ "$(field io 6 "$T/o.svg")" = "$(field io 6 "$T/n.svg")" ]
}

# ----------------------------------------------------------- performance

@test "100,000 lines of 20 frames render to valid XML" {
	perl -e '
		my @r = qw(io lock sched sleep net ipc fault other);
		my $s = 12345;
		sub rnd { $s = ($s * 1103515245 + 12345) % 2147483648; $s % $_[0] }
		for (1 .. 100000) {
			my @f = ($r[rnd(8)]);
			push @f, sprintf("func_%d_%d%s", $_, rnd($_ < 5 ? 3 : 8),
				$_ > 12 ? "_[k]" : "") for 1 .. 19;
			print join(";", @f), " ", 1 + rnd(100), "\n";
		}' > "$T/big.folded"
	[ "$(wc -l < "$T/big.folded")" -eq 100000 ]
	sum=$(awk '{ s += $NF } END { print s }' "$T/big.folded")
	"$FG" --colors=offcpu "$T/big.folded" > "$T/big.svg"
	xmllint --noout "$T/big.svg"
	[ "$(field all 2 "$T/big.svg")" = "$sum" ]
	[ "$(frames "$T/big.svg" | wc -l)" -gt 1000 ]
}
