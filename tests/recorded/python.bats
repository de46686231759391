#!/usr/bin/env bats
# The tools on the Python recordings the guests made: the Python frames in
# place of the interpreter's evaluation frames once the native ones are
# named, and report, collapse and the flame graph showing the program's
# functions with files and lines.  tests/guest/64-python.bats samples
# tests/workload/offsample-pywait.py on every interpreter it tests
# (Debian's 3.11, pyenv's 3.11, 3.12, 3.13, Debian 13's 3.13 in its own
# root; and pyenv's 3.12 with python_stacks=0) and leaves the drained
# files in its results; the files the frames name are this machine's (the
# guests share its root, and the Debian 13 root is under build/deps).
#
# From: 64-python.bats (tests/run.sh runs this suite after the guests when
# that suite ran; OFFS_RECORDED is the results folder, build/test-results).
#
#   OFFS_RECORDED=build/test-results bats tests/recorded/python.bats

# OFFS, ROOT (tests/host/tools-common.bash)
load ../host/tools-common
load recordings

SYM=$ROOT/tools/offsample-symbolize

setup() {
	T=$BATS_TEST_TMPDIR
	: "${OFFS_RECORDED:?the results folder of a guest run (build/test-results)}"
}

@test "python (recorded): Python frames take the place of _PyEval_EvalFrameDefault; python_stacks=0 leaves them" {
	local rec recs
	recs=$(recordings python-merged)
	for rec in $recs; do
		echo "# $rec"
		"$SYM" < "$rec" > "$T/named"
		# hold_lock's thread: libc's wait at the leaf, then the
		# interpreter's C code, then the Python frames, then
		# start_thread: one stack.
		run -0 awk -F'\t' '!/^#/ && $9 ~ /\[py\]hold_lock / { print $9 }' "$T/named"
		echo "$output" | tr ';' '\n'
		assert_output --regexp '^__futex_abstimed_wait_common[^;]*\(libc\.so\.6\);.*;\[py\]hold_lock \([^;]*:[0-9]+\);\[py\]Thread\.run \([^;]*threading\.py:[0-9]+\);\[py\]Thread\._bootstrap_inner \([^;]*\);\[py\]Thread\._bootstrap \([^;]*\);.*start_thread'
		# No evaluation frame is left where Python frames are.
		run -1 grep -E '_PyEval_EvalFrameDefault' "$T/named"
	done
	recs=$(recordings python-native)
	for rec in $recs; do
		"$SYM" < "$rec" > "$T/named"
		run -1 grep -F '[py]' "$T/named"
		run -0 grep -c '_PyEval_EvalFrameDefault' "$T/named"
	done
}

@test "python (recorded): offsample report, collapse and flamegraph name the program's functions with files and lines, on every interpreter" {
	local rec recs f label
	for label in debian 3.11 3.12 3.13 trixie; do
		recs=$(recordings "python-$label")
		for rec in $recs; do
			echo "# $rec"
			run -0 "$OFFS" report "$rec"
			assert_output --regexp 'hold_lock \(offsample-pywait\.py:[0-9]+\)'
			assert_output --regexp 'Sleeper\.nap \(offsample-pywait\.py:[0-9]+\)'
			# (3.11 calls the thread's target through C: native
			# frames between Thread.run and it.  Debian 13's files are
			# in its root, not here: its native frames stay
			# "FILE+0xOFF (missing)".)
			run -0 "$OFFS" collapse "$rec"
			assert_line --regexp '^lock;python3\.1[1-3];([^;]+;)*Thread\._bootstrap \(threading\.py:[0-9]+\);Thread\._bootstrap_inner \(threading\.py:[0-9]+\);Thread\.run \(threading\.py:[0-9]+\);([^;]+;)*hold_lock \(offsample-pywait\.py:[0-9]+\);'
			run -0 "$OFFS" flamegraph -o "$T/fg.svg" "$rec"
			for f in 'Sleeper.nap' hold_lock wait_queue serve spin; do
				# The frame's title: "NAME (FILE:LINE) (SECONDS s, SHARE%)".
				grep -qE ">$f \(offsample-pywait\.py:[0-9]+\) \([0-9.]+ s, " "$T/fg.svg" ||
					{ echo "no $f in the SVG of $rec"; return 1; }
			done
		done
	done
}
