#!/bin/bash
# Experiment: where a cold user walk's time goes (variants of umm.c/pin.c
# built by /tmp/exp/mk.sh), then the flat-cost diagnosis (flat.sh).
cd /work/main; G=${G:?}
R=$G/res/guest; mkdir -p $R
exec > $R/run.log 2>&1
set -x
K=$(uname -r)
KO=build/$K/offsample.ko
P=/proc/offsample
st() { awk -v k="$1" '$1==k{print $2}' $P/stats; }
build/bench/offsample-sleepers -n ${N:-5000} -m same > $R/sl.out 2>&1 &
sl=$!
for i in $(seq 600); do grep -q ready $R/sl.out && break; sleep 0.5; done
cat $R/sl.out
sleep 2
for round in 1 2 3; do
for v in w1 w4 w5 w6; do
	if [ $v = k ]; then insmod /tmp/exp2/$K/w1/offsample.ko hz=9 thread_cache=0 user_stacks=0
	else insmod /tmp/exp2/$K/$v/offsample.ko hz=9 thread_cache=0 user_stacks=1; fi
	for i in $(seq 600); do t=$(st ticks); [ "${t:-0}" -ge 2 ] && break; sleep 0.2; done
	while [ "$(st cfi_builds_pending)" != 0 ]; do sleep 0.2; done
	t=$(st ticks); while [ "$(st ticks)" -lt $((t + 2)) ]; do sleep 0.2; done
	echo 0 > /sys/module/offsample/parameters/enabled
	cp $P/stats $R/$round-$v.0
	echo 1 > /sys/module/offsample/parameters/enabled
	t=$(st ticks); while [ "$(st ticks)" -lt $((t + 5)) ]; do sleep 0.2; done
	echo 0 > /sys/module/offsample/parameters/enabled
	cp $P/stats $R/$round-$v.1
	rmmod offsample
done
done
kill $sl; wait $sl
# Deeper stacks: -m distinct (about 20 frames per thread).
build/bench/offsample-sleepers -n 2000 -m distinct > $R/sl3.out 2>&1 &
sl=$!
for i in $(seq 600); do grep -q ready $R/sl3.out && break; sleep 0.5; done
for round in d1 d2; do
for v in w1 w4 w5 w6; do
	insmod /tmp/exp2/$K/$v/offsample.ko hz=9 thread_cache=0 user_stacks=1
	for i in $(seq 600); do t=$(st ticks); [ "${t:-0}" -ge 2 ] && break; sleep 0.2; done
	while [ "$(st cfi_builds_pending)" != 0 ]; do sleep 0.2; done
	t=$(st ticks); while [ "$(st ticks)" -lt $((t + 2)) ]; do sleep 0.2; done
	echo 0 > /sys/module/offsample/parameters/enabled
	cp $P/stats $R/$round-$v.0
	echo 1 > /sys/module/offsample/parameters/enabled
	t=$(st ticks); while [ "$(st ticks)" -lt $((t + 5)) ]; do sleep 0.2; done
	echo 0 > /sys/module/offsample/parameters/enabled
	cp $P/stats $R/$round-$v.1
	rmmod offsample
done
done
kill $sl; wait $sl
echo done > $R/done
