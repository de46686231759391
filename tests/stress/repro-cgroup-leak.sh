#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Reproducer (root, in a guest), fixed in module/cgroup.c (offs_cg_live):
# cgroup references the module used to never drop.
#
#   tests/stress/repro-cgroup-leak.sh [MODULE.ko] [CYCLES]
#
# 1. A load that fails on a parameter parsed after cgroup=: the cgroup
#    setter (module/cgroup.c offs_cgroup_set) took a reference with
#    cgroup_get_from_path(); the module is freed without offs_exit() (init
#    never ran), so nothing puts it.  The cgroup stays "dying" forever.
# 2. A cgroup= write racing with rmmod: param_attr_store() may run after
#    offs_exit() has called offs_cgroup_exit() (the parameter files are
#    removed only after exit returns, in mod_sysfs_teardown()), and the
#    reference it takes is never put.
set -u
ko=${1:-build/$(uname -r)/offsample.ko}
cycles=${2:-30}
P=/sys/module/offsample/parameters
CG=/sys/fs/cgroup
dying() { awk '$1 == "nr_dying_descendants" { print $2 }' $CG/cgroup.stat; }
settle() { local i; for i in $(seq 1 20); do [ "$(dying)" -le "$1" ] && break; sleep 0.5; done; }

[ -d /sys/module/offsample ] && rmmod offsample
d0=$(dying)
mkdir $CG/offs-leak1
insmod "$ko" cgroup=/offs-leak1 hz=0 2>/dev/null && { echo "load unexpectedly succeeded"; rmmod offsample; }
rmdir $CG/offs-leak1
settle "$d0"
echo "1. failed load: dying cgroups left: $(( $(dying) - d0 )) (expected 0)"

d0=$(dying)
mkdir $CG/offs-leak2
for i in $(seq 1 "$cycles"); do
	insmod "$ko" hz=1000
	( while :; do echo /offs-leak2 > $P/cgroup; done ) 2>/dev/null &
	w=$!
	sleep 0.2
	rmmod offsample
	kill $w; wait $w 2>/dev/null
done
rmdir $CG/offs-leak2
settle "$d0"
echo "2. $cycles rmmod racing cgroup= writes: dying cgroups left: $(( $(dying) - d0 )) (expected 0)"
