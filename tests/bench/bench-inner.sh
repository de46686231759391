#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The part of `make bench` that runs where the module can be loaded (a
# virtme-ng guest, or a host whose kernel takes modules), as root:
#
#   tests/bench/bench-inner.sh OUTDIR
#
# Collects raw measurements into OUTDIR; tests/bench/report.py turns them
# into docs/BENCHMARKS.md.  Nothing here judges a result.  Sections:
#
#   tick   per-thread cost of a sampler tick (module counters) with N
#          sleeping threads, cold (thread_cache=0, with and without user
#          stacks) and warm, against full passes over /proc/*/task/*/stack
#          and against the floor: empty walks of the same threads
#          (tests/bench/walkfloor, a test-only module)
#   model  tick time = a * threads + b * changed threads: warm ticks with
#          0, 10 and 100% of N sleeping threads waking up between ticks
#   pipe   `perf bench sched pipe` alone, with offsample at 19 and 99 Hz,
#          with offcputime-bpfcc and with `perf record -e sched:sched_switch
#          -a -g`, interleaved; sampler CPU time per tick idle vs loaded
#   read   reading /proc/offsample/stacks with N unique stacks: time per
#          read, symbol lookups per read, distinct kernel addresses
#   cfi    user stacks through code without frame pointers: the one-time
#          cost of compiling the .eh_frame of the files real programs map
#          (perl, python3, bash, libc, ...), and the cold per-thread tick
#          cost with the tables (default) against cfi_cache_mb=0 (frame
#          pointers only), with the user frames each walk found
#   blockers  the cost of naming lock holders: threads waiting for a mutex
#          the main thread holds, warm and cold ticks with blockers=1
#          against blockers=0
#   oncpu  the cost of sampling running threads: one spinning thread per
#          CPU, warm ticks with oncpu=1 against oncpu=0 (time per capture,
#          IPI included); then `perf bench sched pipe` alone and with the
#          module at 19 Hz, oncpu=1 and oncpu=0, interleaved
#   python the cost of Python frames: PY_THREADS threads of Debian's
#          python3 sleeping PY_DEPTH Python calls deep (tests/bench/
#          pysleepers.py), in a cgroup the module is told to sample alone;
#          cold ticks with python_stacks=1 and 0 (the same native walk,
#          without the frame chain), warm ticks with both, and the same
#          count of C threads (offsample-sleepers) as the native reference;
#          then the memory names take when every thread has names of its
#          own (--distinct: PY_THREADS x PY_DEPTH names)
#   (memory: stats memory_bytes and /proc/meminfo around every load)
#
# Sizes and loop counts come from the environment (BENCH_*; defaults
# below, smaller ones with BENCH_QUICK=1).  BENCH_SECTIONS selects
# sections ("tick model pipe read cfi blockers waitfor oncpu python" by
# default).
set -u
OUT=${1:?usage: bench-inner.sh OUTDIR}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 125
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LC_ALL=C
export PYTHONUNBUFFERED=1

KREL=$(uname -r)
KO=${BENCH_KO:-$TOP/build/$KREL/offsample.ko}
FLOOR_KO=${BENCH_FLOOR_KO:-$TOP/build/$KREL/walkfloor/offsample_walkfloor.ko}
BB=${BENCH_BIN:-$TOP/build/bench}
SLEEPERS=$BB/offsample-sleepers
BT=$BB/offsample-benchtool
P=/proc/offsample
PARAM=/sys/module/offsample/parameters

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	d_sizes="300 1000"; d_passes=3; d_tcold=3; d_twarm=6; d_model_sizes=300
	d_pipe_threads=500; d_pipe_loops=3000; d_pipe_rounds=1
	d_read_sizes="100 1000"; d_reads=3; d_profile_secs=3; d_py_threads=200
else
	d_sizes="1000 5000 20000"; d_passes=5; d_tcold=5; d_twarm=18; d_model_sizes="1000 2000"
	d_pipe_threads=2000; d_pipe_loops=20000; d_pipe_rounds=7
	d_read_sizes="100 10000"; d_reads=5; d_profile_secs=8; d_py_threads=1000
fi
SECTIONS=${BENCH_SECTIONS:-tick model pipe read cfi blockers waitfor oncpu python}
PY_THREADS=${BENCH_PY_THREADS:-$d_py_threads}
PY_DEPTH=${BENCH_PY_DEPTH:-10}
PY_BIN=${BENCH_PY_BIN:-/usr/bin/python3}
MODEL_SIZES=${BENCH_MODEL_SIZES:-$d_model_sizes}
MODEL_PCTS=${BENCH_MODEL_PCTS:-0 10 100}
BLK_THREADS=${BENCH_BLK_THREADS:-1000}
CFI_THREADS=${BENCH_CFI_THREADS:-1000}
SIZES=${BENCH_SIZES:-$d_sizes}
PASSES=${BENCH_PROC_PASSES:-$d_passes}
TICKS_COLD=${BENCH_TICKS_COLD:-$d_tcold}
TICKS_WARM=${BENCH_TICKS_WARM:-$d_twarm}
TICK_HZ=${BENCH_TICK_HZ:-9}
PIPE_THREADS=${BENCH_PIPE_THREADS:-$d_pipe_threads}
PIPE_LOOPS=${BENCH_PIPE_LOOPS:-$d_pipe_loops}
PIPE_ROUNDS=${BENCH_PIPE_ROUNDS:-$d_pipe_rounds}
# BENCH_PIPE_PEERS=0: offsample only, without offcputime and perf record
# (the flat-cost figures; their throughput losses are then not measured).
PIPE_PEERS=${BENCH_PIPE_PEERS:-1}
PIPE_IDLE_SECS=${BENCH_PIPE_IDLE_SECS:-3}
READ_SIZES=${BENCH_READ_SIZES:-$d_read_sizes}
READS=${BENCH_READS:-$d_reads}
PROFILE=${BENCH_PROFILE:-1}
PROFILE_SECS=${BENCH_PROFILE_SECS:-$d_profile_secs}

mkdir -p "$OUT/raw"
R=$OUT/raw
LOG=$OUT/bench.log
: > "$LOG"
: > "$OUT/commands.txt"
sl_pid=
bg_pid=

log() { echo "[$(date +%T)] $*" | tee -a "$LOG" >&2; }

# cmd SECTION COMMAND...: remember the exact command line (once per form).
cmd() {
	local sec=$1 line
	shift
	line=${*//$TOP\//}	# paths in the checkout, relative to it
	grep -qxF "$sec	$line" "$OUT/commands.txt" 2>/dev/null ||
		printf '%s\t%s\n' "$sec" "$line" >> "$OUT/commands.txt"
}

unload() {
	if [ -d /sys/module/offsample ]; then
		rmmod offsample || { sleep 1; rmmod offsample; }
	fi
}

# load PARAM=VALUE...
load() {
	unload
	cmd module "insmod build/\$(uname -r)/offsample.ko $*"
	insmod "$KO" "$@"
}

# stat_get, wait_ticks, wait_cfi, start_ready: shared with
# tests/bench/insnprof-guest.sh.
. "$TOP/tests/bench/lib.sh"

snap() {	# snap NAME: stats and meminfo with a timestamp
	{ echo "mono_ns $("$BT" now)"; cat $P/stats; } > "$R/$1.stats"
}
meminfo() { grep -E '^(MemFree|Slab|SReclaimable|SUnreclaim|VmallocUsed|KernelStack|PageTables):' /proc/meminfo > "$R/$1.meminfo"; }

# stop_wait PID POLLS LABEL ROUND: wait for PID (signalled already) for
# POLLS x 0.2 s, then kill it (logged).
stop_wait() {
	local pid=$1 i
	for i in $(seq 1 "$2"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$pid" 2>/dev/null; then
		log "pipe: round $4 $3: still running $(($2 / 5)) s after SIGINT, killed"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

# sleepers_start N MODE [OPTION...]: start the sleeping-thread helper, wait for "ready".
sleepers_start() {
	local n=$1 mode=$2
	shift 2
	cmd load "build/bench/offsample-sleepers -n $n -m $mode${*:+ $*}"
	start_ready /tmp/sleepers.out sleepers "$SLEEPERS" -n "$n" -m "$mode" "$@" || return 1
	sl_pid=$ready_pid
}
# proc_stop VAR SIGNAL: stop the process whose pid VAR holds, let its
# threads be reaped before the next measurement.
proc_stop() {
	local -n pid_var=$1
	if [ -n "$pid_var" ]; then
		kill "-$2" "$pid_var" 2>/dev/null
		wait "$pid_var" 2>/dev/null
		pid_var=
	fi
	sleep 2
}
sleepers_stop() { proc_stop sl_pid TERM; }

cleanup() {
	[ -n "$bg_pid" ] && kill -KILL $bg_pid 2>/dev/null
	[ -n "${py_pid:-}" ] && kill -KILL $py_pid 2>/dev/null
	sleepers_stop
	unload
}
trap cleanup EXIT

# ---------------------------------------------------------------- env
log "environment"
{
	echo "kernel	$KREL"
	echo "date	$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpus	$(nproc)"
	echo "cpu_model	$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
	echo "mem_total_kb	$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
	echo "module_version	$(modinfo -F version "$KO" 2>/dev/null)"
	echo "perf	$(perf version 2>/dev/null)"
	echo "bcc	$(dpkg-query -W -f='${Version}' bpfcc-tools 2>/dev/null)"
	echo "where	${BENCH_WHERE:-unknown}"
	echo "clocksource	$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
	echo "preempt	$(uname -v | grep -o 'PREEMPT[_A-Z]*' | head -n1)"
	echo "threads_max	$(cat /proc/sys/kernel/threads-max)"
	echo "quick	${BENCH_QUICK:-0}"
	echo "sections	$SECTIONS"
	echo "sizes	$SIZES"
	echo "proc_passes	$PASSES"
	echo "ticks_cold	$TICKS_COLD"
	echo "ticks_warm	$TICKS_WARM"
	echo "tick_hz	$TICK_HZ"
	echo "pipe_threads	$PIPE_THREADS"
	echo "pipe_loops	$PIPE_LOOPS"
	echo "pipe_rounds	$PIPE_ROUNDS"
	echo "read_sizes	$READ_SIZES"
	echo "reads	$READS"
	echo "cfi_threads	$CFI_THREADS"
	echo "blk_threads	$BLK_THREADS"
	echo "py_threads	$PY_THREADS"
	echo "py_depth	$PY_DEPTH"
	echo "py_version	$("$PY_BIN" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)"
	echo "model_sizes	$MODEL_SIZES"
	echo "model_pcts	$MODEL_PCTS"
	echo "model_ticks	$TICKS_COLD"
} > "$OUT/env.tsv"

# Room for tens of thousands of threads.
sysctl -qw kernel.threads-max=200000 kernel.pid_max=4194304 vm.max_map_count=1048576
ulimit -u unlimited 2>/dev/null
ulimit -n 65536 2>/dev/null
# perf and bcc need tracefs/debugfs.
mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
sysctl -qw kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0 2>/dev/null
unload
dmesg > "$OUT/dmesg-boot.txt" 2>/dev/null

# ---------------------------------------------------------------- tick
# profile LABEL: where the sampler kthread spends its time, from perf
# (cpu-clock samples of that one thread, with call chains): self time per
# function and time including callees.
profile() {
	local label=$1 kpid
	kpid=$(pgrep -x offsample | head -n1)
	[ -n "$kpid" ] || return 0
	log "profile $label ($PROFILE_SECS s)"
	cmd profile "perf record -e cpu-clock -F 999 -g -p <offsample kthread> -o /tmp/prof.data -- sleep $PROFILE_SECS"
	perf record -q -N -e cpu-clock -F 999 -g -p "$kpid" -o /tmp/prof.data -- sleep "$PROFILE_SECS" \
		> /dev/null 2> "$R/$label.perf.err"
	cmd profile "perf report -i /tmp/prof.data --no-children --sort sym --stdio -g none"
	perf report -i /tmp/prof.data --no-children --sort sym --stdio -g none \
		--percent-limit 0.5 2>/dev/null | grep -v '^$' > "$R/$label.profile-self"
	cmd profile "perf report -i /tmp/prof.data --children --sort sym --stdio -g none"
	perf report -i /tmp/prof.data --children --sort sym --stdio -g none \
		--percent-limit 1 2>/dev/null | grep -v '^$' > "$R/$label.profile-children"
	rm -f /tmp/prof.data
}

# One stats window: load with PARAMS, let the first ticks pass (the first
# one captures every thread whatever the cache says), take deltas over
# TICKS ticks.
tick_window() {	# LABEL TICKS PARAMS...
	local label=$1 ticks=$2 t0 tmo secs
	shift 2
	meminfo "$label.before"
	load hz="$TICK_HZ" "$@" || return 1
	wait_ticks 2 600 || return 1
	# Until the .eh_frame tables of the threads' files are built: until
	# then captures through them are not kept (not whole), and a warm
	# window would count cold ticks (the 2026-11-26 run's 1,000-thread
	# warm window did: 1,049 full captures in 23 ticks, 1,000 of them in
	# the tick where the sleepers' table became ready).
	wait_cfi 600 || return 1
	# Snapshots at tick boundaries: writing enabled=0 returns once the
	# tick in progress has ended, so the deltas cover whole ticks only.
	echo 0 > $PARAM/enabled
	snap "$label.0"
	t0=$(stat_get ticks)
	# One sleep for the window, computed beforehand: polling would start
	# a process or two every 0.2 s, threads that change at every tick.
	# Ticks longer than a period make fewer ticks than that: then poll.
	secs=$(awk -v t="$ticks" -v h="$TICK_HZ" 'BEGIN { printf "%.2f", (t + 0.5) / h }')
	echo 1 > $PARAM/enabled
	sleep "$secs"
	wait_ticks $((t0 + ticks)) $((ticks * 60 + 60))
	echo 0 > $PARAM/enabled
	snap "$label.1"
	echo 1 > $PARAM/enabled
	meminfo "$label.loaded"
	if [ "$PROFILE" = 1 ] && [ -n "${profile_this:-}" ]; then
		profile "$label"
	fi
	unload
	meminfo "$label.after"
}

# walk_floor LABEL: the floor of a tick, an empty walk of every thread
# (tests/bench/walkfloor: RCU walk reading the fields a tick reads, nothing
# else), TICKS_WARM walks at TICK_HZ, as a warm window's ticks.
walk_floor() {
	local label=$1 ms
	ms=$((1000 / TICK_HZ))
	log "floor: $TICKS_WARM empty walks, $ms ms apart"
	cmd floor "insmod build/\$(uname -r)/walkfloor/offsample_walkfloor.ko walks=$TICKS_WARM interval_ms=$ms"
	insmod "$FLOOR_KO" walks="$TICKS_WARM" interval_ms="$ms" || return 1
	{
		echo "walks $TICKS_WARM"
		echo "threads $(cat /sys/module/offsample_walkfloor/parameters/threads)"
		echo "ns_total $(cat /sys/module/offsample_walkfloor/parameters/ns_total)"
	} > "$R/$label.floor"
	rmmod offsample_walkfloor
}

if [[ " $SECTIONS " == *" tick "* ]]; then
	for n in $SIZES; do
		log "tick: $n sleeping threads"
		sleepers_start "$n" same || continue
		sleep 2
		meminfo "tick-$n.base"
		log "tick: /proc pass x$PASSES"
		cmd tick "build/bench/offsample-benchtool procpass $PASSES stack"
		"$BT" procpass "$PASSES" stack > "$R/tick-$n.procpass"
		if [ "$PROFILE" = 1 ] && [ "$n" = "${SIZES##* }" ]; then
			log "profile of one /proc pass"
			cmd profile "perf record -e cpu-clock -F 999 -g -o /tmp/prof.data -- build/bench/offsample-benchtool procpass 1 stack"
			perf record -q -N -e cpu-clock -F 999 -g -o /tmp/prof.data -- \
				"$BT" procpass 1 stack > "$R/tick-$n-procpass.profile-run" 2> "$R/tick-$n-procpass.perf.err"
			perf report -i /tmp/prof.data --no-children --sort sym --stdio -g none \
				--percent-limit 0.5 2>/dev/null | grep -v '^$' > "$R/tick-$n-procpass.profile-self"
			perf report -i /tmp/prof.data --children --sort sym --stdio -g none \
				--percent-limit 1 2>/dev/null | grep -v '^$' > "$R/tick-$n-procpass.profile-children"
			rm -f /tmp/prof.data
		fi
		walk_floor "tick-$n-floor0"
		profile_this=
		[ "$n" = "${SIZES##* }" ] && profile_this=1
		log "tick: cold (thread_cache=0)"
		tick_window "tick-$n-cold" "$TICKS_COLD" thread_cache=0 user_stacks=1
		log "tick: cold without the kernel stack cache (kstack_cache=0)"
		tick_window "tick-$n-coldnc" "$TICKS_COLD" thread_cache=0 user_stacks=1 kstack_cache=0
		log "tick: cold, kernel stacks only (thread_cache=0 user_stacks=0)"
		tick_window "tick-$n-coldk" "$TICKS_COLD" thread_cache=0 user_stacks=0
		log "tick: warm (thread cache on)"
		tick_window "tick-$n-warm" "$TICKS_WARM"
		walk_floor "tick-$n-floor1"
		profile_this=
		sleepers_stop
	done
fi

# ---------------------------------------------------------------- model
# The cost model, tick time = a * threads + b * changed threads: N threads
# of offsample-sleepers -m same, of which 0, 10 or 100% wake up every
# 100 ms (-w): at 9 Hz each of those has run between any two ticks.  Warm
# windows (thread cache on); the changed threads are the cache misses.
if [[ " $SECTIONS " == *" model "* ]]; then
	for n in $MODEL_SIZES; do
		for pct in $MODEL_PCTS; do
			log "model: $n threads, $pct% of them running between ticks"
			sleepers_start "$n" same -w "$pct" || continue
			sleep 2
			# Cold-sized windows: with every thread changing, a
			# tick is a cold one (and 5,000 threads waking 10
			# times a second saturate an emulated guest).
			tick_window "model-$n-$pct" "$TICKS_COLD"
			sleepers_stop
		done
	done
fi

# ---------------------------------------------------------------- pipe
PIPE_TSV=$OUT/pipe.tsv
pipe_run() {	# ROUND CONFIG: one perf bench sched pipe, ops/s into $PIPE_TSV
	local round=$1 conf=$2 o
	cmd pipe "taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS"
	o=$(taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS" 2>&1)
	echo "$o" > "$R/pipe-$round-$conf.out"
	printf '%s\t%s\t%s\t%s\n' "$round" "$conf" \
		"$(echo "$o" | awk '/ops\/sec/ { print $1 }')" \
		"$(echo "$o" | awk '/usecs\/op/ { print $1 }')" >> "$PIPE_TSV"
	log "pipe: round $round $conf: $(echo "$o" | awk '/ops\/sec/ { print $1 }') ops/s"
}

pipe_offsample() {	# ROUND HZ [CONF PARAMS...]
	local round=$1 hz=$2 conf=${3:-offsample$2}
	shift 2
	[ $# = 0 ] || shift
	load hz="$hz" "$@" || return 1
	wait_ticks 3 300 || return 1
	# The module loaded for good, as in production: the first run after
	# a load is the first time it sees perf and the dozens of libraries
	# perf links, whose .eh_frame tables are then built (in a worker, up
	# to a quarter of a CPU: cfi bounds); with one vCPU (BENCH_MODE=icount)
	# that cost the timed run 35% (2026-12-05).  So an untimed run first,
	# until those tables are built.
	cmd pipe "taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS (untimed, then until no table build is pending)"
	taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS" > "$R/pipe-$round-$conf.first" 2>&1
	wait_cfi 600 || return 1
	snap "pipe-$round-$conf.0"
	sleep "$PIPE_IDLE_SECS"
	snap "pipe-$round-$conf.1"
	pipe_run "$round" "$conf"
	snap "pipe-$round-$conf.2"
	pipe_steady "$round" "$conf"
	unload
}

# pipe_steady ROUND CONFIG: the timed run's window above holds the start of
# perf (exec of perf and its libraries, the fork of its child, the shell's
# command substitution): first copies of new processes' mappings that a
# steady load does not have.  So a second window with the same load running
# before and after it, taken like the idle window (snap, sleep, snap): the
# flat cost is this window against the idle one.
pipe_steady() {
	local round=$1 conf=$2 pp t
	cmd pipe "taskset -c 0 perf bench sched pipe -l 1000000000 & (untimed; stats over $PIPE_IDLE_SECS s from the third tick after its start, then killed)"
	taskset -c 0 perf bench sched pipe -l 1000000000 > /dev/null 2>&1 &
	pp=$!
	t=$(stat_get ticks)
	if wait_ticks $((t + 3)) 300; then
		snap "pipe-$round-$conf.3"
		sleep "$PIPE_IDLE_SECS"
		snap "pipe-$round-$conf.4"
	fi
	pkill -KILL -P "$pp" 2>/dev/null || :
	kill -KILL "$pp" 2>/dev/null || :
	wait "$pp" 2>/dev/null || :
}

pipe_offcputime() {	# ROUND
	local round=$1 f=/tmp/offcputime.out t0 i ok=0
	cmd pipe "offcputime-bpfcc (all threads, user+kernel stacks, until SIGINT)"
	t0=$("$BT" now)
	offcputime-bpfcc > $f 2>&1 &
	bg_pid=$!
	for i in $(seq 1 1500); do
		grep -q '^Tracing' $f && { ok=1; break; }
		kill -0 $bg_pid 2>/dev/null || break
		sleep 0.2
	done
	echo "$round	$(( ($("$BT" now) - t0) / 1000000 ))" >> "$OUT/offcputime-startup.tsv"
	if [ $ok = 1 ]; then
		pipe_run "$round" offcputime
	else
		log "offcputime did not start: $(tail -n 5 $f)"
	fi
	kill -INT $bg_pid 2>/dev/null
	stop_wait $bg_pid 600 offcputime "$round"
	bg_pid=
	{ head -n 3 $f; echo "..."; echo "lines: $(wc -l < $f)"; } > "$R/pipe-$round-offcputime.tool"
	rm -f $f
}

pipe_perf() {	# ROUND
	local round=$1 f=/tmp/perf-sched.data ack=
	cmd pipe "perf record -e sched:sched_switch -a -g -o /tmp/perf-sched.data"
	rm -f $f /tmp/perf.ctl /tmp/perf.ack
	mkfifo /tmp/perf.ctl /tmp/perf.ack
	# Started with events disabled; "enable" is acknowledged once perf has
	# synthesized the existing threads and is recording.
	perf record -N -D -1 --control fifo:/tmp/perf.ctl,/tmp/perf.ack \
		-e sched:sched_switch -a -g -o $f > /dev/null 2> /tmp/perf-rec.err &
	bg_pid=$!
	exec 8<>/tmp/perf.ack 9<>/tmp/perf.ctl
	echo enable >&9
	read -r -t 600 ack <&8
	exec 8<&- 9<&-
	if [ "$ack" = ack ] && kill -0 $bg_pid 2>/dev/null; then
		pipe_run "$round" perfrecord
	else
		log "perf record did not start: $(cat /tmp/perf-rec.err)"
	fi
	# Stopped with SIGINT, then it writes its file; at most 120 s for that
	# (2026-12-04: the first round's perf record had not exited after
	# 16 minutes on 6.1.0-57 and the run was stopped by hand).
	kill -INT $bg_pid 2>/dev/null
	stop_wait $bg_pid 600 perfrecord "$round"
	bg_pid=
	{ cat /tmp/perf-rec.err; ls -l $f 2>/dev/null; } > "$R/pipe-$round-perfrecord.tool"
	rm -f $f /tmp/perf.ctl /tmp/perf.ack
}

if [[ " $SECTIONS " == *" pipe "* ]]; then
	log "pipe: $PIPE_THREADS sleeping threads, $PIPE_ROUNDS rounds"
	: > "$OUT/pipe.tsv"
	: > "$OUT/offcputime-startup.tsv"
	if sleepers_start "$PIPE_THREADS" same; then
		pipe_run 0 warmup
		for r in $(seq 1 "$PIPE_ROUNDS"); do
			pipe_run "$r" base
			pipe_offsample "$r" 19
			pipe_run "$r" base
			pipe_offsample "$r" 99
			[ "$PIPE_PEERS" = 0 ] && continue
			pipe_run "$r" base
			pipe_offcputime "$r"
			pipe_run "$r" base
			pipe_perf "$r"
		done
		pipe_run "$((PIPE_ROUNDS + 1))" base
		sleepers_stop
	fi
fi

# ---------------------------------------------------------------- cfi

if [[ " $SECTIONS " == *" cfi "* ]]; then
	log "cfi: table builds for the files of real programs, $CFI_THREADS sleeping threads"
	sleepers_start "$CFI_THREADS" same || true
	cmd cfi "perl -e 'sleep 3600' & python3 -c 'import time; time.sleep(3600)' & bash -c 'read x < FIFO' (programs without frame pointers, waiting)"
	perl -e 'sleep 3600' & cfi_p1=$!
	python3 -c 'import time; time.sleep(3600)' & cfi_p2=$!
	mkfifo /tmp/cfi.fifo 2>/dev/null
	bash -c 'read x < /tmp/cfi.fifo' & cfi_p3=$!
	sleep 2
	# Each file mapped executable by a sampled process, and its size.
	for pid in $(pgrep -x perl) $(pgrep -x python3) $cfi_p3 $sl_pid; do
		awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' /proc/$pid/maps 2>/dev/null
	done | sort -u | while read -r f; do
		printf '%s\t%s\n' "$f" "$(stat -c %s "$f")"
	done > "$R/cfi-files.tsv"
	# 0. One program's files alone (sleep: the program, libc, ld.so): the
	# process in a cgroup of its own, the module told to sample only it.
	cfi_cg=/sys/fs/cgroup/offs-bench-cfi
	mkdir -p $cfi_cg
	sleep 3600 & cfi_p0=$!
	echo $cfi_p0 > $cfi_cg/cgroup.procs
	cmd cfi "sleep 3600 alone in cgroup /offs-bench-cfi; insmod ... cgroup=/offs-bench-cfi (its files: sleep, libc.so.6, ld-linux)"
	awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' /proc/$cfi_p0/maps | sort -u |
	while read -r f; do
		# FILE, size, .eh_frame size, the table module/ucfi.c builds.
		printf '%s\t%s\t%s\t%s\n' "$f" "$(stat -c %s "$f")" \
			"$(readelf -SW "$f" | perl -ne 'print hex($1) if /\]\s+\.eh_frame\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)/')" \
			"$("$BB/offsample-cfidump" -s "$f" | awk '{ print $6 }')"
	done > "$R/cfi-alone-files.tsv"
	load hz="$TICK_HZ" thread_cache=0 cgroup=/offs-bench-cfi &&
		wait_ticks 1 600 && wait_cfi 600
	snap cfi-alone
	unload
	kill $cfi_p0 2>/dev/null
	wait $cfi_p0 2>/dev/null
	rmdir $cfi_cg 2>/dev/null
	# 1. Builds: load, wait until every table is built, the counters.
	meminfo cfi-build.before
	load hz="$TICK_HZ" thread_cache=0 && wait_ticks 1 600 && wait_cfi 600
	snap cfi-build
	meminfo cfi-build.loaded
	unload
	# 2. Cold ticks with the tables and with frame pointers only.
	log "cfi: cold ticks with the tables"
	tick_window cfi-on "$TICKS_COLD" thread_cache=0 user_stacks=1
	log "cfi: cold ticks with frame pointers only (cfi_cache_mb=0)"
	tick_window cfi-off "$TICKS_COLD" thread_cache=0 user_stacks=1 cfi_cache_mb=0
	kill $cfi_p1 $cfi_p2 $cfi_p3 2>/dev/null
	wait $cfi_p1 $cfi_p2 $cfi_p3 2>/dev/null
	rm -f /tmp/cfi.fifo
	sleepers_stop
fi

# ---------------------------------------------------------------- blockers
# The cost of naming lock holders: BLK_THREADS threads wait for a mutex the
# main thread holds; the same ticks with blockers=1 and blockers=0, warm
# (the waiters are cache hits, their lock is read again every tick) and
# cold (thread_cache=0).
if [[ " $SECTIONS " == *" blockers "* ]]; then
	log "blockers: $BLK_THREADS threads waiting for one mutex"
	if sleepers_start "$BLK_THREADS" lock; then
		sleep 2
		for mode in on off; do
			b=$([ $mode = on ] && echo 1 || echo 0)
			log "blockers: warm ticks, blockers=$b"
			tick_window "blk-warm-$mode" "$TICKS_WARM" blockers=$b
			log "blockers: cold ticks, blockers=$b"
			tick_window "blk-cold-$mode" "$TICKS_COLD" thread_cache=0 blockers=$b
		done
		sleepers_stop
	fi
fi

# ---------------------------------------------------------------- waitfor
# The cost of naming who holds up threads that wait in the kernel (a
# child, mmap_lock, a file's kernel locks, a UNIX socket's peer, a file
# lock, a pipe's or local connection's other end, a CPU):
# build/offsample-waitfor (tests/workload/offsample-waitfor.c), warm ticks
# with blockers=1 and blockers=0.
if [[ " $SECTIONS " == *" waitfor "* ]]; then
	log "waitfor: kernel waits with holders"
	cmd waitfor "$TOP/build/offsample-waitfor"
	"$TOP/build/offsample-waitfor" > "$OUT/waitfor.out" 2>&1 &
	wf=$!
	for _ in $(seq 1 600); do
		grep -qx ready "$OUT/waitfor.out" 2>/dev/null && break
		kill -0 "$wf" 2>/dev/null || break
		sleep 0.1
	done
	if grep -qx ready "$OUT/waitfor.out" 2>/dev/null; then
		for mode in on off; do
			b=$([ $mode = on ] && echo 1 || echo 0)
			log "waitfor: warm ticks, blockers=$b"
			tick_window "wf-warm-$mode" "$TICKS_WARM" blockers=$b
		done
	else
		log "waitfor: the workload did not start; section skipped"
	fi
	kill "$wf" 2>/dev/null || true
	wait "$wf" 2>/dev/null || true
fi

# ---------------------------------------------------------------- oncpu
# The cost of sampling running threads (one IPI to the thread's CPU per
# running thread per tick): one spinning shell loop per CPU, warm ticks
# with oncpu=1 and oncpu=0; then the pipe benchmark (both processes on
# CPU 0, one of them running at most ticks) alone and with the module at
# 19 Hz, oncpu=1 and oncpu=0, interleaved.
if [[ " $SECTIONS " == *" oncpu "* ]]; then
	ncpu=$(nproc)
	log "oncpu: $ncpu spinning threads"
	cmd oncpu "bash -c 'while :; do :; done' (one per CPU)"
	oc_pids=()
	for i in $(seq 1 "$ncpu"); do
		bash -c 'while :; do :; done' &
		oc_pids+=($!)
	done
	sleep 1
	for mode in on off; do
		o=$([ $mode = on ] && echo 1 || echo 0)
		log "oncpu: warm ticks, oncpu=$o"
		tick_window "oncpu-warm-$mode" "$TICKS_WARM" oncpu=$o
	done
	kill "${oc_pids[@]}" 2>/dev/null
	wait "${oc_pids[@]}" 2>/dev/null
	log "oncpu: pipe, $PIPE_ROUNDS rounds"
	PIPE_TSV=$OUT/oncpu-pipe.tsv
	: > "$PIPE_TSV"
	pipe_run 0 warmup
	for r in $(seq 1 "$PIPE_ROUNDS"); do
		pipe_run "$r" base
		pipe_offsample "$r" 19 oncpu1 oncpu=1
		pipe_run "$r" base
		pipe_offsample "$r" 19 oncpu0 oncpu=0
	done
	pipe_run "$((PIPE_ROUNDS + 1))" base
	PIPE_TSV=$OUT/pipe.tsv
fi

# ---------------------------------------------------------------- python
# The cost of Python frames.  Each workload runs alone in a cgroup the
# module samples alone (cgroup=), so that a window's captures are its
# threads' (and the process's main thread).
PY_CG=/sys/fs/cgroup/offs-bench-py
py_pid=

# py_start OUTFILE COMMAND...: COMMAND in the cgroup, until it prints "ready".
py_start() {
	local f=$1
	shift
	mkdir -p $PY_CG
	cmd python "$* (in cgroup /offs-bench-py)"
	start_ready "$f" python sh -c 'echo $$ > '$PY_CG'/cgroup.procs && exec "$@"' sh "$@" || return 1
	py_pid=$ready_pid
}
py_stop() { proc_stop py_pid KILL; }

if [[ " $SECTIONS " == *" python "* ]]; then
	log "python: $PY_THREADS threads of $PY_BIN, $PY_DEPTH calls deep"
	if py_start /tmp/py.out "$PY_BIN" "$TOP/tests/bench/pysleepers.py" -n "$PY_THREADS" -d "$PY_DEPTH"; then
		sleep 2
		for mode in on off; do
			v=$([ $mode = on ] && echo 1 || echo 0)
			log "python: cold ticks, python_stacks=$v"
			tick_window "py-cold-$mode" "$TICKS_COLD" cgroup=/offs-bench-py thread_cache=0 python_stacks=$v
			log "python: warm ticks, python_stacks=$v"
			tick_window "py-warm-$mode" "$TICKS_WARM" cgroup=/offs-bench-py python_stacks=$v
		done
		# One thread's merged stack, as the module prints it.
		load hz="$TICK_HZ" cgroup=/offs-bench-py && wait_ticks 2 600 && wait_cfi 600
		awk -F'\t' '!/^#/ && $9 ~ /\[py\]same_level_/ { print $9; exit }' $P/stacks > "$R/py-stack.txt"
		unload
		py_stop
	fi
	log "python: native reference, $PY_THREADS C threads (offsample-sleepers)"
	if py_start /tmp/py.out "$SLEEPERS" -n "$PY_THREADS" -m same; then
		sleep 2
		tick_window py-cold-native "$TICKS_COLD" cgroup=/offs-bench-py thread_cache=0
		py_stop
	fi
	log "python: names, $PY_THREADS x $PY_DEPTH distinct functions"
	if py_start /tmp/py.out "$PY_BIN" "$TOP/tests/bench/pysleepers.py" -n "$PY_THREADS" -d "$PY_DEPTH" --distinct; then
		sleep 2
		for mode in on off; do
			v=$([ $mode = on ] && echo 1 || echo 0)
			log "python: names, cold ticks, python_stacks=$v"
			# max_stacks above the names' count at the default size (10,000), as
			# in section read: within a 4 GiB guest's max_stacks_limit.
			tick_window "py-names-$mode" "$TICKS_COLD" cgroup=/offs-bench-py thread_cache=0 \
				python_stacks=$v max_stacks=16384
		done
		py_stop
	fi
	rmdir $PY_CG 2>/dev/null
fi

# ---------------------------------------------------------------- read
if [[ " $SECTIONS " == *" read "* ]]; then
	for n in $READ_SIZES; do
		log "read: $n threads with distinct stacks"
		sleepers_start "$n" distinct || continue
		sleep 2
		meminfo "read-$n.before"
		# max_stacks above the record count, so nothing is dropped (and
		# within max_stacks_limit, a share of the guest's RAM).
		ms=$((n + n / 4))
		[ $ms -ge 16384 ] || ms=16384
		load hz=19 max_stacks=$ms || continue
		wait_ticks 2 600
		# Reads are timed with the sampler paused (the table stays).
		echo 0 > $PARAM/enabled
		snap "read-$n.loaded"
		meminfo "read-$n.loaded"
		cmd read "build/bench/offsample-benchtool read /proc/offsample/stacks"
		: > "$R/read-$n.reads"
		for i in $(seq 1 "$READS"); do
			snap "read-$n-$i.0"
			"$BT" read $P/stacks 1 | sed "s/^read 0/read $i/" >> "$R/read-$n.reads"
			snap "read-$n-$i.1"
		done
		# The same content once more, to count what was printed.
		cat $P/stacks > /tmp/stacks.txt
		awk -F'\t' '!/^#/ { n++; split($8, f, ";"); for (i in f) if (f[i] ~ /\+0x/) a[f[i]] = 1 }
			END { printf "records\t%d\n", n; printf "distinct_kernel_frames\t%d\n", length(a) }' \
			/tmp/stacks.txt > "$R/read-$n.content"
		awk -F'\t' '!/^#/ { k[$8] = 1; u[$9] = 1 } END { printf "distinct_kstacks\t%d\ndistinct_ustacks\t%d\n", length(k), length(u) }' \
			/tmp/stacks.txt >> "$R/read-$n.content"
		head -n 40 /tmp/stacks.txt | cut -c1-400 > "$R/read-$n.head"
		rm -f /tmp/stacks.txt
		unload
		meminfo "read-$n.after"
		sleepers_stop
	done
fi

dmesg > "$OUT/dmesg.txt" 2>/dev/null
log "done"
exit 0
