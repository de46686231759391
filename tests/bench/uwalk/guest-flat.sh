# Sourced by guest-run.sh 1 (its st, sleepers_start, KO, P, R): the
# flat-cost check.  2,000 threads of -m same, hz=19; sampler_cpu_ns and
# ticks deltas over 6 s idle, over one `taskset -c 0 perf bench sched
# pipe -l 20000`, and over 6 s of a CPU-bound loop on CPU 0 (busy, no
# switches), with the sampler thread allowed anywhere, pinned to CPU 0
# (the pipe's) or to CPU 1; three rounds.
sleepers_start sl2.out -n 2000 -m same
echo "round aff phase ticks cpu_ns cpu_per_tick_us ops" > $R/flat.txt
for round in 1 2 3; do
for aff in any 0 1; do
	insmod $KO hz=19
	for i in $(seq 600); do t=$(st ticks); [ "${t:-0}" -ge 3 ] && break; sleep 0.2; done
	kt=$(pgrep -x offsample | head -1)
	[ $aff = any ] || taskset -pc $aff $kt
	sleep 1
	t0=$(st ticks); c0=$(st sampler_cpu_ns)
	sleep 6
	t1=$(st ticks); c1=$(st sampler_cpu_ns)
	echo "$round $aff idle $((t1-t0)) $((c1-c0)) $(( (c1-c0)/(t1-t0)/1000 )) -" >> $R/flat.txt
	o=$(taskset -c 0 perf bench sched pipe -l 20000 2>&1 | awk '/ops\/sec/{print $1}')
	t2=$(st ticks); c2=$(st sampler_cpu_ns)
	echo "$round $aff pipe $((t2-t1)) $((c2-c1)) $(( (c2-c1)/(t2-t1)/1000 )) $o" >> $R/flat.txt
	taskset -c 0 perl -e '$t = time + 6; 1 while time < $t' &
	sp=$!; wait $sp
	t3=$(st ticks); c3=$(st sampler_cpu_ns)
	echo "$round $aff spin $((t3-t2)) $((c3-c2)) $(( (c3-c2)/(t3-t2)/1000 )) -" >> $R/flat.txt
	grep -E "^(ticks|cache_hits|cache_misses|tick_ns_avg|thread_ns_full) " $P/stats >> $R/flat.stats
	rmmod offsample
done
done
kill $sl; wait $sl
