#!/usr/bin/env bats
# JIT frames named, with the module loaded: a real JVM (OpenJDK, compiled
# methods described by `jcmd PID Compiler.perfmap`) and a real Node.js
# (--perf-basic-prof), each running the workload of tests/workload/
# (OffsampleHot.java, offsample-jit.js): a method that runs (on-CPU
# samples) and one that waits (off-CPU samples under it).  `offsample
# record` keeps the map entries its [anon] frames fall in; the runtime and
# its map are gone before the recording is read, as for a cron snapshot
# read the next day.  The share of user frames with a name before and
# after goes to the artifacts (jit-share-KREL.txt).
#
# Kernels: one, test by test (tags once-1 and once-2): the module walks
# JIT code by frame pointers like any code without .eh_frame, which the
# other suites test on every kernel; what is new here is the tools'.

load lib

OFFS=$TOP/tools/offsample
SYM=$TOP/tools/offsample-symbolize

setup_file() {
	load lib
	offs_load hz=19
}

teardown_file() {
	load lib
	offs_unload
}

setup() {
	T=$BATS_TEST_TMPDIR
	RT_PID=
}

teardown() {
	if [ -n "$RT_PID" ]; then
		kill -KILL "$RT_PID" 2>/dev/null || true
		wait "$RT_PID" 2>/dev/null || true
		rm -f "/tmp/perf-$RT_PID.map"
	fi
}

# start_rt OUT CMD...: start a runtime in the background, wait (up to
# 10 min under emulation) for its "ready PID" line; RT_PID is its pid.
start_rt() {
	local out=$1
	shift
	"$@" > "$out" 2>&1 3>&- &
	RT_PID=$!
	wait_line "$out" '^ready [0-9]+$' 6000 "$RT_PID" > /dev/null || {
		cat "$out" >&2
		return 1
	}
	assert_equal "$(awk '/^ready/ { print $2 }' "$out")" "$RT_PID"
}

# record_rt NAME: record 6 s, stop the runtime, remove its map; the
# recording is $T/NAME.stacks (and in the artifacts).
record_rt() {
	run --separate-stderr "$OFFS" record -d 6 -o "$T/$1.stacks"
	assert_success
	assert_equal "$stderr" ""
	cp "$T/$1.stacks" "$ARTIFACTS/jit-$1-$KREL.stacks" 2>/dev/null || true
	kill -KILL "$RT_PID"
	wait "$RT_PID" 2>/dev/null || true
	rm -f "/tmp/perf-$RT_PID.map"
}

# shares NAME COMM: the recording's share of named user frames without
# JIT names (its "# jit:" lines dropped, no live maps) and with them.
shares() {
	local before after
	grep -v '^# jit' "$T/$1.stacks" | "$SYM" --no-live-jit > "$T/$1.before"
	"$SYM" < "$T/$1.stacks" > "$T/$1.after"
	before=$(share "$T/$1.before" "$2")
	after=$(share "$T/$1.after" "$2")
	echo "$1 ($KREL): named user frames, weighted by samples: before $before, after $after" |
		tee -a "$ARTIFACTS/jit-share-$KREL.txt"
}

# bats test_tags=once-1
@test "OpenJDK: the compiled method that runs and the one that sleeps are named in the folded output of a recording read after the JVM exited" {
	[ -f "$TOP/build/jit/OffsampleHot.class" ] ||
		fail "build/jit/OffsampleHot.class not built (javac missing: tests/lib/deps.sh test)"
	start_rt "$T/java.out" java -XX:+PreserveFramePointer -Xss1m -XX:TieredStopAtLevel=4 \
		-cp "$TOP/build/jit" OffsampleHot
	run -0 jcmd "$RT_PID" Compiler.perfmap
	run -0 grep -c ' long OffsampleHot.spinWork(int)$' "/tmp/perf-$RT_PID.map"
	record_rt java
	run -0 grep '^# jit: .* name=long OffsampleHot.spinWork(int)$' "$T/java.stacks"
	"$OFFS" collapse --user-only "$T/java.stacks" > "$T/java.folded"
	cp "$T/java.folded" "$ARTIFACTS/jit-java-$KREL.folded" 2>/dev/null || true
	shares java java
	run -0 grep -E '^cpu;java;.*;long OffsampleHot\.spinWork\(int\) [0-9]+$' "$T/java.folded"
	run -0 grep -E ';void OffsampleHot\.napWork\(int, long\);void java\.lang\.Thread\.sleep\(long\);' "$T/java.folded"
}

# bats test_tags=once-2
@test "Node.js --perf-basic-prof: the JavaScript function that runs and the one that waits are named in the folded output of a recording read after node exited" {
	# Without inlining: V8 may compile the script's main loop (on-stack
	# replacement) with spinWork() and napWork() inlined into it, and then
	# those frames do not exist (seen: only "JS:* offsample-jit.js:1:1"
	# in the make test of 89200d4 on 6.12; node --trace-turbo-inlining
	# shows it on the host too).  The lines of offsample-jit.js are
	# asserted below: its text must not move.
	start_rt "$T/node.out" node --perf-basic-prof --no-turbo-inlining "$TOP/tests/workload/offsample-jit.js"
	record_rt node
	"$OFFS" collapse --user-only "$T/node.stacks" > "$T/node.folded"
	cp "$T/node.folded" "$ARTIFACTS/jit-node-$KREL.folded" 2>/dev/null || true
	shares node node
	local js=$TOP/tests/workload/offsample-jit.js
	run -0 grep -E "^cpu;node;.*;JS:[*^~]?spinWork $js:12:18 [0-9]+\$" "$T/node.folded"
	run -0 grep -E ";JS:[*^~]?napWork $js:19:17;" "$T/node.folded"
}
