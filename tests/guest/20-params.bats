#!/usr/bin/env bats
# Parameters and control words: valid values apply, invalid ones are
# rejected with EINVAL and change nothing.
#
# Kernels: one (file tag once-2: make test runs it in its second
# guest only, tests/guest/run.sh): what is tested is the module's own
# parsing and generation bookkeeping, through interfaces (module
# parameters, seq_file) that are the same on every kernel we test.
# bats file_tags=once-2

load lib

setup_file() {
	load lib
	offs_load
}

teardown_file() {
	load lib
	offs_unload
}

# reject PARAM VALUE: the write fails with EINVAL and the value is unchanged.
reject() {
	local before after
	before=$(cat "$PARAM/$1")
	run bash -c 'printf "%s" "$1" > "$2"' _ "$2" "$PARAM/$1"
	assert_failure
	assert_output --partial "Invalid argument"
	after=$(cat "$PARAM/$1")
	assert_equal "$after" "$before"
}

accept() {
	run -0 bash -c 'printf "%s" "$1" > "$2"' _ "$2" "$PARAM/$1"
	assert_equal "$(cat "$PARAM/$1")" "$3"
}

@test "hz: 1..1000 accepted, everything else rejected" {
	accept hz 1 1
	accept hz 1000 1000
	accept hz "19
" 19
	for v in 0 1001 -1 abc $'\n' " " 4294967296 99999999999999999999 1.5 0x10 "19 20" "$(head -c 5000 /dev/zero | tr '\0' 9)"; do
		reject hz "$v"
	done
	accept hz 9 9
}

@test "max_stacks: 16..1048576, and at most max_stacks_limit (a share of RAM)" {
	local lim
	lim=$(stat_get max_stacks_limit)
	accept max_stacks 16 16
	accept max_stacks "$lim" "$lim"
	for v in 0 15 $((lim + 1)) 1048577 -5 x $'\n'; do reject max_stacks "$v"; done
	accept max_stacks 8192 8192
}

@test "max_retired: 1..16; threads_rate: 1..10000000" {
	accept max_retired 1 1
	accept max_retired 16 16
	for v in 0 17 -1 x $'\n'; do reject max_retired "$v"; done
	accept max_retired 4 4
	accept threads_rate 1 1
	accept threads_rate 10000000 10000000
	for v in 0 10000001 -1 x $'\n'; do reject threads_rate "$v"; done
	accept threads_rate 20000 20000
}

@test "max_depth: 1..128" {
	accept max_depth 1 1
	accept max_depth 128 128
	for v in 0 129 -1 deep $'\n'; do reject max_depth "$v"; done
	accept max_depth 48 48
}

@test "enabled and kthreads: booleans only" {
	accept enabled 0 N
	accept enabled 1 Y
	accept kthreads n N
	accept kthreads y Y
	for v in 2 maybe $'\n' -1; do
		reject enabled "$v"
		reject kthreads "$v"
	done
}

@test "key: comma list of comm, pid, tid, tname" {
	accept key pid comm,pid
	accept key "tid,tname" comm,tid,tname
	accept key comm comm
	for v in $'\n' bogus "pid,bogus" "pid;tid" ","; do reject key "$v"; done
}

@test "control: reset accepted, anything else EINVAL" {
	run -0 bash -c "echo reset > $P/control"
	for v in $'\n' resett "reset now" RESET drain "$(head -c 100 /dev/zero | tr '\0' r)"; do
		run bash -c 'printf "%s" "$1" > "$2"' _ "$v" $P/control
		assert_failure
	done
	assert_equal "$(stat_get resets)" 1
}

@test "reset discards the current generation and starts a new one" {
	sleep 1
	gen=$(stat_get generation)
	run -0 bash -c "echo reset > $P/control"
	assert_equal "$(stat_get generation)" $((gen + 1))
	[ "$(stat_get generation_samples)" -lt "$(stat_get samples)" ]
}

@test "enabled=0 stops sampling at once; enabled=1 resumes" {
	echo 0 > $PARAM/enabled
	t0=$(stat_get ticks)
	sleep 1.5
	assert_equal "$(stat_get ticks)" "$t0"
	echo 1 > $PARAM/enabled
	sleep 1.5
	[ "$(stat_get ticks)" -gt "$t0" ]
}
