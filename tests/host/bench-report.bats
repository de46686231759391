#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# make bench's report (tests/bench/report.py) on the raw results of a real
# run: the tick section of BENCH_MODE=icount at 1,000 threads on 6.1
# (tests/fixtures/bench/icount-tick, from make bench of 2394be6; only the
# cold and warm windows, the floor and the /proc pass kept).  The A/A
# section (--aa: a second run of the same command) and the targets that
# hold in instruction counts (issue 52); bench.sh's checks of BENCH_AA.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	FIX=$ROOT/tests/fixtures/bench/icount-tick
	REPORT=$ROOT/tests/bench/report.py
}

# stat_of FILE NAME: a counter of a stats snapshot.
stat_of() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

@test "bench report: a run against itself: every figure of both runs, none apart" {
	run -0 python3 "$REPORT" "$FIX" --aa "$FIX"
	assert_line '## A/A: the same command run again'
	# The summary: median, 90th percentile and largest distance, and
	# how many pairs are within 1% and 5%: all of them.
	assert_line --regexp '^\| 0\.00% \| 0\.00% \| 0\.00% \| ([0-9]+) of \1 \| ([0-9]+) of \2 \|$'
	# The figures the targets are stated on, both runs.
	assert_line '| 1,000 | floor | 75 instr | 75 instr | 0.00% |'
	assert_line '| 1,000 | warm | 143 instr | 143 instr | 0.00% |'
	assert_line '| 1,000 | cold | 3.5 kinstr | 3.5 kinstr | 0.00% |'
}

@test "bench report: a figure that differs between the runs leads the pairs furthest apart, by how far" {
	local b=$BATS_TEST_TMPDIR/b w0 w1
	cp -r "$FIX" "$b"
	# The warm window's walk time doubled in the second run: its end
	# snapshot gets the window's walk time added once more.
	w0=$(stat_of "$FIX/raw/tick-1000-warm.0.stats" tick_walk_ns_total)
	w1=$(stat_of "$FIX/raw/tick-1000-warm.1.stats" tick_walk_ns_total)
	[ -n "$w0" ] && [ "$w1" -gt "$w0" ]
	sed -i "s/^\(tick_walk_ns_total *\)$w1\$/\1$((2 * w1 - w0))/" "$b/raw/tick-1000-warm.1.stats"
	run -0 grep -c "^tick_walk_ns_total *$((2 * w1 - w0))\$" "$b/raw/tick-1000-warm.1.stats"
	run -0 python3 "$REPORT" "$FIX" --aa "$b"
	# |2a - a| / 2a = 50%: the one pair apart, first of the list.
	assert_line --regexp '^\| 0\.00% \| 0\.00% \| 50\.00% \| ([0-9]+) of [0-9]+ \|'
	local first
	first=$(printf '%s\n' "$output" | sed -n '/^| figure | first run/,/^$/p' | sed -n 3p)
	[[ $first == '| `tick[0]/warm/walk` | '*' | 50.00% |' ]] || {
		echo "first of the furthest pairs: $first" >&2
		return 1
	}
	# The sampler's CPU per thread did not change: the warm row says so.
	assert_line '| 1,000 | warm | 143 instr | 143 instr | 0.00% |'
	# Without --aa there is no such section.
	run -0 python3 "$REPORT" "$FIX"
	refute_line '## A/A: the same command run again'
}

@test "bench report: in instruction counts the cold capture is held to 2,000 instructions, the warm visit to 2x the floor" {
	run -0 python3 "$REPORT" "$FIX"
	assert_line --regexp '^\| cold capture at most 2,000 instructions per thread \(user stacks from cached tables\) \| 1,000: 3\.5 kinstr; over by a factor of 1\.75 \| \*\*MISSED\*\* \|$'
	assert_line --regexp '^\| warm within 2× of the floor .*\| 1,000: 1\.86× \(floor 75 instr per thread.* \| \*\*met\*\* \|$'
}

# tests/fixtures/bench/icount-pipe: the pipe section of make bench of
# aa826e6 (BENCH_MODE=icount BENCH_PIPE_PEERS=0, round 1 of 3 kept): the
# idle window (.0 -> .1), the timed run (.1 -> .2) and the steady window
# (.3 -> .4) of offsample at 19 and 99 Hz.
@test "bench report: the flat verdict is on the steady pipe window, the timed run's ratio beside it" {
	local fix=$ROOT/tests/fixtures/bench/icount-pipe b=$BATS_TEST_TMPDIR/b
	run -0 python3 "$REPORT" "$fix"
	assert_line '| flat in the context-switch rate: sampler CPU per tick with `perf bench sched pipe` running / idle ≤ 1.05 (19 Hz) | 1.06 (302.9 kinstr / 286.0 kinstr per tick, 2,081 threads, medians of 1 rounds; over the timed run, which also starts perf: 1.12); over by a factor of 1.01 | **MISSED** |'
	assert_line '| 19 | 2,081 | 286.0 kinstr | 321.4 kinstr | 1.12 | 302.9 kinstr | 1.06 | 280.9 kinstr | 317.0 kinstr | 298.4 kinstr |'
	assert_line '| 99 | 2,081 | 283.2 kinstr | 308.1 kinstr | 1.09 | 297.1 kinstr | 1.05 | 278.0 kinstr | 303.6 kinstr | 292.6 kinstr |'
	# A run from before the steady window: the verdict on the timed run.
	cp -r "$fix" "$b"
	rm "$b"/raw/*.3.stats "$b"/raw/*.4.stats
	run -0 python3 "$REPORT" "$b"
	assert_line '| flat in the context-switch rate: sampler CPU per tick with `perf bench sched pipe` running / idle ≤ 1.05 (19 Hz) | 1.12 (321.4 kinstr / 286.0 kinstr per tick, 2,081 threads, medians of 1 rounds); over by a factor of 1.07 | **MISSED** |'
	assert_line '| 19 | 2,081 | 286.0 kinstr | 321.4 kinstr | 1.12 | n/a | n/a | 280.9 kinstr | 317.0 kinstr | n/a |'
}

@test "bench.sh: BENCH_AA is 0 or 1, and an A/A pair needs guests" {
	run -2 env BENCH_AA=2 "$ROOT/tests/bench/bench.sh"
	assert_output 'bench.sh: BENCH_AA is 0 or 1, not 2'
	run -2 env BENCH_AA=1 "$ROOT/tests/bench/bench.sh" --host
	assert_output 'bench.sh: BENCH_AA=1 needs a guest'
}

@test "insnprof symbolize: instructions per function, per full capture, from the guest's symbols" {
	local d=$BATS_TEST_TMPDIR/ip
	mkdir -p "$d"
	# Text symbols of the kernel and the module (a data symbol between
	# them must not take their code), as /proc/kallsyms prints them.
	printf '%s\n' 'ffffffff81000000 T _stext' 'ffffffff81000100 t foo' \
		'ffffffff81000200 T bar' 'ffffffff81000300 d some_data' \
		"$(printf 'ffffffffc0000000 t offs_visit\t[offsample]')" \
		"$(printf 'ffffffffc0000400 t offs_tick\t[offsample]')" > "$d/kallsyms"
	# Blocks: two in foo, one in bar, one past some_data (still bar's
	# code), two in the module, one in user space.
	printf '%s\n' 'ffffffff81000100 30' 'ffffffff81000180 10' 'ffffffff81000200 20' \
		'ffffffff81000310 5' 'ffffffffc0000010 100' 'ffffffffc0000400 40' \
		'555555554000 50' > "$d/blocks.1"
	# As /proc/offsample/stats: some lines are not numbers.
	printf 'version 0.7.0\nticks 5\ncache_misses 10\nthreads_visited 12\n' > "$d/stats.0"
	printf 'version 0.7.0\nticks 7\ncache_misses 30\nthreads_visited 40\n' > "$d/stats.1"
	run -0 python3 "$ROOT/tests/bench/insnprof/symbolize.py" "$d"
	assert_line '2 ticks, 28 threads visited, 20 full captures; instructions executed by the guest in them: 255 (kernel 205, user 50)'
	assert_line "in the module's own functions: 140 (54.9%)"
	assert_line '           100        5.0  39.2%  offs_visit [offsample]'
	assert_line '            50        2.5  19.6%  [user]'
	assert_line '            40        2.0  15.7%  foo'
	assert_line '            40        2.0  15.7%  offs_tick [offsample]'
	assert_line '            25        1.2   9.8%  bar'
	run -2 python3 "$ROOT/tests/bench/insnprof/symbolize.py"
}
