#!/bin/bash
cd /tmp/bench || exit 125
env BENCH_WHERE=qemu-tcg\ guest\ \(virtme-ng\ --disable-kvm\)\,\ 2\ vCPUs\,\ 4G BENCH_QUICK=0 BENCH_SECTIONS=tick BENCH_SIZES=5000 tests/bench/bench-inner.sh /tmp/bench/build/bench/run 
rc=$?
echo $rc > /tmp/bench/build/bench/run/guest.rc
exit $rc
