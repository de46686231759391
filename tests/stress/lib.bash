# SPDX-License-Identifier: GPL-2.0
# Helpers for the stress and fuzz suites (tests/guest/70-stress.bats,
# 75-fuzz.bats), loaded after tests/guest/lib.bash.  Runs in the guest, as
# root.
#
# OFFS_STRESS=short (default: what `make test` runs, a minute or two per
# suite) or long (`make stress`, `make test-debug`, `make test-rt`).
# Every figure a test measures is appended to $ARTIFACTS/stress-results.txt
# as "part.name value" and printed (bats shows it on failure).

STRESS_MODE=${OFFS_STRESS:-short}
STRESS_RESULTS=$ARTIFACTS/stress-results.txt

# stress_dur NAME: seconds (or cycles, inputs) for this part in this mode.
stress_dur() {
	local short long
	case "$1" in
	churn)    short=6;    long=120 ;;
	readers)  short=5;    long=90 ;;
	params)   short=5;    long=90 ;;
	cycles)   short=3;    long=100 ;;
	tiny)     short=4;    long=60 ;;
	mem)      short=5;    long=60 ;;
	fuzz)     short=10000; long=100000 ;;
	*) echo "stress_dur: unknown part $1" >&2; return 1 ;;
	esac
	if [ "$STRESS_MODE" = long ]; then echo "$long"; else echo "$short"; fi
}

result() {	# result PART NAME VALUE
	echo "$1.$2 $3" >> "$STRESS_RESULTS"
	echo "$1.$2 $3"
}

# The helper programs: built by `make workload` (mk/stress.mk) into
# build/stress; compiled here if missing (the guest's root is read-only).
stress_bin() {
	local name=$1 dir=${OFFS_STRESS_BIN:-$TOP/build/stress}
	if [ -x "$dir/$name" ] && [ "$dir/$name" -nt "$TOP/tests/stress/$name.c" ]; then
		echo "$dir/$name"
		return
	fi
	dir=${BATS_RUN_TMPDIR:-/tmp}/stress-bin
	mkdir -p "$dir"
	if [ ! -x "$dir/$name" ]; then
		gcc -O2 -Wall -pthread -o "$dir/$name" "$TOP/tests/stress/$name.c" >&2 || return 1
	fi
	echo "$dir/$name"
}

# Hung tasks are reported after 30 s instead of 120 s, so a stuck rmmod or
# reader shows up within a test.
stress_setup() {
	if [ -w /proc/sys/kernel/hung_task_timeout_secs ]; then
		echo 30 > /proc/sys/kernel/hung_task_timeout_secs
	fi
	mkdir -p "$ARTIFACTS"
}

# cgroups removed but still referenced (a leaked reference keeps one dying).
cgroups_dying() {
	awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/cgroup.stat
}

# cgroups_dying_settle BASE: the dying count once it is back to BASE, or
# after 10 s what it still is.
cgroups_dying_settle() {
	local n i
	for i in $(seq 1 20); do
		n=$(cgroups_dying)
		[ "$n" -le "$1" ] && break
		sleep 0.5
	done
	echo "$n"
}

# Also count hung tasks and RT "sleeping function" reports as splats.
stress_dmesg_clean() {
	dmesg_clean 'blocked for more than|sleeping function called|scheduling while atomic|kernel BUG|refcount_t:|list_(add|del) corruption|kmem_cache_destroy|Object.*remaining|unreferenced object'
}

# ---- readers and drainers ----

# The loops below stop when the file $READERS_STOP appears, not on a
# signal: a reader subshell sent TERM (its trap writing the count and
# exiting) sometimes never ended, 1 run in 8 of 70-stress's readers test
# on 6.1 under emulation (2026-11-27: 60 s after TERM it sat in wait4 with
# no child left; CI 2026-11-26 and a 6.12 run of 2026-11-25 ran into
# bats's 600 s limit the same way).  A test of a file in each iteration
# is a builtin, and the loops end at a point of their own choosing, after
# a whole read or a whole recorded drain.

# reader_loop FILE COUNTFILE: read FILE in a loop until $READERS_STOP
# exists; the number of complete reads then goes to COUNTFILE.
reader_loop() {
	local f=$1 out=$2 n=0
	while [ ! -e "$READERS_STOP" ]; do
		cat "$f" > /dev/null 2>&1 && n=$((n + 1))
	done
	echo $n > "$out"
}

# drainer_loop OUT PAUSE: drain in a loop until $READERS_STOP exists; each
# drain appends one line "generation header_samples sum_of_counts
# header_records lines" to OUT.  A drain that cannot be opened (ENOMEM
# under fault injection) is counted in OUT.failed.
drainer_loop() {
	local out=$1 pause=$2 tmp=$1.$BASHPID.tmp
	: > "$out.failed.$BASHPID"
	while [ ! -e "$READERS_STOP" ]; do
		if cat $P/drain > "$tmp" 2>/dev/null; then
			drain_summary "$tmp" >> "$out"
		else
			echo x >> "$out.failed.$BASHPID"
		fi
		sleep "$pause"
	done
	rm -f "$tmp"
}

# stress_readers_start DIR NREADERS NDRAINERS: loops over every /proc file
# (NREADERS per file, the drain file excepted) plus NDRAINERS drainers.
stress_readers_start() {
	local dir=$1 nr=$2 nd=$3 f i
	READERS=()
	mkdir -p "$dir"
	READERS_STOP=$dir/readers.stop
	rm -f "$READERS_STOP"
	for f in stacks threads stats; do
		for i in $(seq 1 "$nr"); do
			reader_loop $P/$f "$dir/reads.$f.$i" 3>&- &
			READERS+=($!)
		done
	done
	for i in $(seq 1 "$nd"); do
		drainer_loop "$dir/drains" 0.3 3>&- &
		READERS+=($!)
	done
}

# A reader or drainer still there 60 s (wall clock) after it was told to
# stop fails the test with what it and its children were doing (6.12,
# 2026-11-25: one never ended and the test ran into bats's 600 s limit
# with no evidence).
# The limit is on $SECONDS, not on a count of 0.1 s pauses: with spinners
# on both vCPUs each pause (a fork and exec of sleep) took about a second
# under emulation, so 600 of them ran into bats's limit before any
# evidence was printed (CI, 6.1, 2026-11-26).  The evidence also goes to
# the results file, which outlives a test that bats times out.
stress_readers_stop() {
	[ ${#READERS[@]} -gt 0 ] || return 0
	local p left end=$((SECONDS + 60))
	touch "$READERS_STOP"
	while :; do
		left=()
		for p in "${READERS[@]}"; do
			kill -0 "$p" 2>/dev/null && left+=("$p")
		done
		[ ${#left[@]} -eq 0 ] && break
		[ $SECONDS -ge $end ] && break
		sleep 0.1
	done
	if [ ${#left[@]} -gt 0 ]; then
		stress_stragglers "${left[@]}" 2>&1 | tee -a "$STRESS_RESULTS" >&2
		kill -KILL "${left[@]}" 2>/dev/null || true
	fi
	wait "${READERS[@]}" 2>/dev/null || true
	READERS=()
	[ ${#left[@]} -eq 0 ]
}

# stress_stragglers PID...: what the PIDs and their children are doing:
# state, wait channel, system call and kernel stack of each, the module's
# counters, and the kernel's list of blocked tasks (sysrq w, in dmesg).
stress_stragglers() {
	local p kids
	echo "# readers still running 60 s after the stop file: $*"
	ps -eo pid,ppid,stat,wchan:32,etime,args | sed 's/^/# /'
	kids=$(pgrep -P "$(echo "$@" | tr ' ' ,)" || true)
	for p in "$@" $kids; do
		echo "# == $p $(cat /proc/"$p"/cmdline 2>/dev/null | tr '\0' ' ')"
		echo "#    state: $(awk '{ print $3 }' /proc/"$p"/stat 2>/dev/null)" \
			"syscall: $(cat /proc/"$p"/syscall 2>/dev/null)"
		sed 's/^/#    /' /proc/"$p"/stack 2>/dev/null || true
	done
	sed 's/^/# stats: /' "$P/stats" 2>/dev/null || true
	echo w > /proc/sysrq-trigger 2>/dev/null || true
	dmesg | tail -n 200 | sed 's/^/# dmesg: /'
}

# Total complete reads recorded by the reader loops in DIR.
stress_reads() {
	cat "$1"/reads.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}

# ---- accounting ----

# stress_check_drains DIR PART: with sampling stopped (enabled=0 returns
# once no tick is in progress), the drains recorded in DIR/drains plus the
# generation still current must add up to the sampler's own total, each
# drain must agree with its own header, and the drained generations plus
# the current one must be exactly 1..current (no reset in between).
stress_check_drains() {
	local dir=$1 part=$2 rest total nd sumd gen bad
	echo 0 > $PARAM/enabled
	cat $P/stacks > "$dir/rest"
	rest=$(sum_counts "$dir/rest")
	assert_equal "$(hdr_get samples "$dir/rest")" "$rest"
	total=$(stat_get samples)
	touch "$dir/drains"
	nd=$(wc -l < "$dir/drains")
	sumd=$(awk '{ s += $3 } END { print s + 0 }' "$dir/drains")
	bad=$(awk '$2 != $3 || $4 != $5' "$dir/drains")
	result "$part" drains "$nd"
	result "$part" drain_failures "$(cat "$dir"/drains.failed.* 2>/dev/null | wc -l)"
	result "$part" samples_drained "$sumd"
	result "$part" samples_current "$rest"
	result "$part" samples_total "$total"
	[ -z "$bad" ] || { echo "drains whose header disagrees with their records: $bad"; return 1; }
	assert_equal $((sumd + rest)) "$total"
	gen=$(hdr_get generation "$dir/rest")
	assert_equal "$(awk '{ print $1 }' "$dir/drains" | sort -n | tr '\n' ' ')" \
		"$(seq 1 $((gen - 1)) | tr '\n' ' ')"
	assert_equal "$(stat_get offcpu)" $(( $(stat_get samples) + $(stat_get dropped) ))
}

# ---- memory ----

# Empty offsample's symbol cache: it is flushed whenever any module goes
# away, so load and unload crc7 (a module on Debian's kernels and on the
# debug kernel, whose /lib/modules the guest links into its tree).  Fails,
# saying why, if that cannot be done: memory cannot be compared then.
stress_flush_symcache() {
	local err
	if err=$({ modprobe crc7 && modprobe -r crc7; } 2>&1); then
		return 0
	fi
	echo "cannot empty offsample's symbol cache (it is flushed when a module unloads): modprobe crc7 / modprobe -r crc7: $err" >&2
	return 1
}

# drain_summary FILE: the line drainer_loop records for one drain.
drain_summary() {
	awk -F'\t' '/^# generation: / { g = $0; sub(/.*: /, "", g) }
		/^# samples: / { h = $0; sub(/.*: /, "", h) }
		/^# records: / { r = $0; sub(/.*: /, "", r) }
		!/^#/ { s += $1; n++ }
		END { printf "%s %s %d %s %d\n", g, h, s, r, n }' "$1"
}

# stress_quiesced_memory [DRAINS]: memory the module holds with nothing
# recorded, no symbol cached and no .eh_frame table kept.  Leaves sampling off.  The thread cache is
# emptied by a tick with thread_cache=0 (entries of threads not visited go
# at the end of a tick); the generation is drained (its summary appended
# to DRAINS, for stress_check_drains).  Fails if the symbol cache cannot
# be emptied.
stress_quiesced_memory() {
	local tc t0 i tmp=${BATS_TEST_TMPDIR:-/tmp}/quiesce.drain
	tc=$(cat $PARAM/thread_cache)
	echo 0 > $PARAM/thread_cache
	t0=$(stat_get ticks)
	echo 1 > $PARAM/enabled
	for i in $(seq 1 100); do
		[ "$(stat_get ticks)" -gt "$t0" ] && break
		sleep 0.1
	done
	echo 0 > $PARAM/enabled
	cat $P/drain > "$tmp"
	drain_summary "$tmp" >> "${1:-/dev/null}"
	echo "$tc" > $PARAM/thread_cache
	stress_flush_symcache || return 1
	stress_flush_cfi || return 1
	stat_get memory_bytes
	echo "$STRESS_CFI_MB" > $PARAM/cfi_cache_mb
}

# stress_flush_cfi: free the compiled .eh_frame tables (cfi_cache_mb=0
# frees every table not in use; none is with sampling off), after the
# builds in flight; the bound to restore in STRESS_CFI_MB.  Fails if a
# table stays.
stress_flush_cfi() {
	local i
	STRESS_CFI_MB=$(cat $PARAM/cfi_cache_mb)
	for i in $(seq 1 300); do
		[ "$(stat_get cfi_builds_pending)" = 0 ] && break
		sleep 0.1
	done
	echo 0 > $PARAM/cfi_cache_mb
	if [ "$(stat_get cfi_bytes)" != 0 ]; then
		echo "cfi_cache_mb=0 left $(stat_get cfi_bytes) bytes of tables ($(stat_get cfi_builds_pending) builds pending)" >&2
		echo "$STRESS_CFI_MB" > $PARAM/cfi_cache_mb
		return 1
	fi
}

# stress_check_memory PART BASELINE: after stress_quiesced_memory, nothing
# may be left: no stack, user stack, record or cache entry, and
# memory_bytes back to BASELINE (taken the same way right after loading)
# unless the thread snapshot array had to grow (then reported).
stress_check_memory() {
	local part=$1 base=$2 now
	now=$(stress_quiesced_memory) || return 1
	result "$part" memory_baseline "$base"
	result "$part" memory_peak "${STRESS_MEM_PEAK:-0}"
	result "$part" memory_after "$now"
	result "$part" snapshot_grow "$(stat_get snapshot_grow)"
	assert_equal "$(stat_get stacks_unique)" 0
	assert_equal "$(stat_get user_stacks_unique)" 0
	assert_equal "$(stat_get records)" 0
	assert_equal "$(stat_get cache_entries)" 0
	assert_equal "$(stat_get sym_entries)" 0
	assert_equal "$(stat_get cfi_tables)" 0
	if [ "$(stat_get snapshot_grow)" = 0 ]; then
		assert_equal "$now" "$base"
	fi
}

# Sample memory_bytes every second in the background; the maximum so far is
# rewritten to the file given at each sample (tmp + rename), so the file is
# complete whenever the watcher is killed.  No TERM trap: bash can run a
# trap while it parses a $(...) of the loop and then fails with "unexpected
# EOF while looking for matching )" (seen in CI, 2026-11-25), losing the
# peak.
stress_mem_watch_start() {
	local out=$1
	echo 0 > "$out"
	( m=0
	  while :; do
		v=$(stat_get memory_bytes 2>/dev/null || echo 0)
		if [ "${v:-0}" -gt "$m" ]; then
			m=$v
			echo "$m" > "$out.tmp" && mv -f "$out.tmp" "$out"
		fi
		sleep 1
	  done ) 3>&- &
	MEMWATCH=$!
}

stress_mem_watch_stop() {
	kill -TERM "$MEMWATCH" 2>/dev/null || true
	wait "$MEMWATCH" 2>/dev/null || true
}

# ---- kmemleak (debug kernel) ----

kmemleak_available() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w /sys/kernel/debug/kmemleak ]
}

# Leaks reported by a fresh scan (count); the report goes to ARTIFACTS.
kmemleak_scan() {
	local out=$ARTIFACTS/kmemleak-$1.txt
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$out"
	grep -c '^unreferenced object' "$out" || true
}
