#!/bin/bash
# guest-run.sh 1|2, inside the guest (OUT: a directory writable there):
# cold-tick windows of the variants built by build-variants.sh
# (${EXP:-/tmp/exp}/KVER/VARIANT/offsample.ko), module counters before
# and after 5 ticks of each into OUT/ROUND-VARIANT.{0,1}.
#   1: 5,000 threads of -m same, variants v0 v1 v2 v3 and k (v0 with
#      user_stacks=0), two rounds; then the flat-cost check (guest-flat.sh)
#   2: 5,000 threads of -m same, variants w1 w4 w5 w6, three rounds; then
#      2,000 threads of -m distinct, the same variants, two rounds
# Booted as: tests/vm/run-guest.sh --append init_on_alloc=0 KVER OUT --
#   env OUT=OUT tests/bench/uwalk/guest-run.sh 1|2
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.." || exit 1
R=${OUT:?}; mkdir -p $R
exec > $R/run.log 2>&1
set -x
K=$(uname -r)
KO=build/$K/offsample.ko
P=/proc/offsample
st() { awk -v k="$1" '$1==k{print $2}' $P/stats; }

# sleepers_start FILE ARGS...: offsample-sleepers ARGS until it is ready ($sl).
sleepers_start() {
	local f=$R/$1
	shift
	build/bench/offsample-sleepers "$@" > $f 2>&1 &
	sl=$!
	for i in $(seq 600); do grep -q ready $f && break; sleep 0.5; done
	cat $f
}

# window LABEL VARIANT PARAM...: load the variant, wait for two ticks and
# its .eh_frame builds, then two more; counters around 5 ticks.
window() {
	local label=$1 v=$2 t
	shift 2
	insmod ${EXP:-/tmp/exp}/$K/$v/offsample.ko hz=9 thread_cache=0 "$@"
	for i in $(seq 600); do t=$(st ticks); [ "${t:-0}" -ge 2 ] && break; sleep 0.2; done
	while [ "$(st cfi_builds_pending)" != 0 ]; do sleep 0.2; done
	t=$(st ticks); while [ "$(st ticks)" -lt $((t + 2)) ]; do sleep 0.2; done
	echo 0 > /sys/module/offsample/parameters/enabled
	cp $P/stats $R/$label.0
	echo 1 > /sys/module/offsample/parameters/enabled
	t=$(st ticks); while [ "$(st ticks)" -lt $((t + 5)) ]; do sleep 0.2; done
	echo 0 > /sys/module/offsample/parameters/enabled
	cp $P/stats $R/$label.1
	rmmod offsample
}

case ${1:?usage: guest-run.sh 1|2} in
1)
	sleepers_start sl.out -n 5000 -m same
	sleep 2
	for round in 1 2; do
		for v in v0 v1 v2 v3; do
			window $round-$v $v user_stacks=1
		done
		window $round-k v0 user_stacks=0
	done
	kill $sl; wait $sl
	source "$HERE/guest-flat.sh"
	;;
2)
	sleepers_start sl.out -n 5000 -m same
	sleep 2
	for round in 1 2 3; do
		for v in w1 w4 w5 w6; do
			window $round-$v $v user_stacks=1
		done
	done
	kill $sl; wait $sl
	# Deeper stacks: -m distinct (about 20 frames per thread).
	sleepers_start sl3.out -n 2000 -m distinct
	for round in d1 d2; do
		for v in w1 w4 w5 w6; do
			window $round-$v $v user_stacks=1
		done
	done
	kill $sl; wait $sl
	;;
esac
echo done > $R/done
