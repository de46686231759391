#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Reproducer, fixed in module/cgroup.c (offs_cg_resolve); before the fix
# it oopsed the kernel (run it as root in a throw-away guest):
# a cgroup= value whose path goes *through* a cgroup file that is open.
#
#   tests/stress/repro-cgroup-file-walk.sh [MODULE.ko]
#
# offs_cgroup_set() (module/cgroup.c) hands the path to
# cgroup_get_from_path() -> kernfs_walk_and_get() -> kernfs_walk_ns(),
# which calls kernfs_find_ns() on every component without checking that
# the parent is a directory.  For a file node, parent->dir.children
# aliases kernfs_elem_attr.open (the union in struct kernfs_node): NULL
# when nobody has the file open (-> ENOENT, harmless), the file's
# kernfs_open_node when someone does (systemd keeps cgroup.events and
# memory.pressure open on every unit), which is then walked as an rbtree:
# "BUG: kernel NULL pointer dereference ... RIP: kernfs_find_ns+0x3c"
# (seen on 6.1.0-56-amd64).
set -u
ko=${1:-build/$(uname -r)/offsample.ko}
P=/sys/module/offsample/parameters
[ -d /sys/module/offsample ] || insmod "$ko" || exit 1
exec 9</sys/fs/cgroup/cgroup.procs	# the file is open now
bash -c "echo /cgroup.procs/x > $P/cgroup"
echo "write exit status: $? (137 = the writer was killed by an oops)"
exec 9<&-
dmesg | grep -A12 -E 'BUG:|Oops' | head -30
