#!/usr/bin/env bats
# Debug kernel only (make test-debug runs it when the kernel has lockdep,
# /proc/lockdep; tests/stress/guest.sh): offsample never takes a lock of
# its own while it holds a lock of a sampled task.  lockdep records every
# "B taken while A is held" order it sees; for the sampled task's locks
# (its mmap lock, pi_lock, task lock, files lock, fs lock) no such order
# may lead to an offsample lock, which readers of /proc/offsample hold:
# otherwise a reader could stall the sampled program (a writer of its
# mmap lock queued behind our read hold, its page faults behind that).
# Before the fix, "&mm->mmap_lock -> offs_table_lock" was recorded on
# the first user stack captured.

load ../lib

teardown() {
	workload_stop
	true
}

teardown_file() {
	load ../lib
	offs_unload
}

# The "-> name" dependency lines of one lock class in /proc/lockdep.
lockdep_after() {
	awk -v RS= -v c="$1" '{ n = split($0, l, "\n"); if (l[1] ~ (": " c "$")) for (i = 2; i <= n; i++) print l[i] }' /proc/lockdep
}

@test "lockdep: no offsample lock is ever taken under a sampled task's lock" {
	local c deps
	[ -r /proc/lockdep ]
	grep -q 'debug_locks: *1' /proc/lockdep_stats
	# Everything that takes the sampled tasks' locks: user stacks, wait
	# objects (files), paths (roots), a reader and a drain meanwhile.
	offs_load hz=99 key=tid,wobj
	workload_start -n 2 sleep mutex pipe poll switch
	sleep 3
	cat $P/stacks > /dev/null
	cat $P/drain > /dev/null
	cat $P/threads > /dev/null
	sleep 1
	# The module's classes are registered (they go away at unload) ...
	grep -q ': offs_table_lock$' /proc/lockdep
	# ... and the sampled tasks' lock classes were seen.
	for c in '&mm->mmap_lock' '&p->pi_lock' '&p->alloc_lock' '&newf->file_lock' '&fs->lock'; do
		grep -qF ": $c" /proc/lockdep
		deps=$(lockdep_after "$c")
		echo "$c: $(echo "$deps" | grep -c .) dependencies"
		run grep -E -- '-> \[[0-9a-f]+\] offs_' <<< "$deps"
		assert_failure
	done
	grep -q 'debug_locks: *1' /proc/lockdep_stats
}
