# SPDX-License-Identifier: GPL-2.0
# guest_share T0 BUDGET NOW LEFT JOBS: the seconds a guest starting at NOW
# may run when the whole test run began at T0 and may take BUDGET seconds,
# with LEFT guests (this one included) still to start, JOBS at a time:
# what is left of the budget, less 2 minutes for `make uninstall` and the
# summary, over the rounds of guests still to run; at least 300 s.  A
# guest that ends early leaves its time to the next ones.  (tests/run.sh;
# tested by tests/host/run-share.bats.)
guest_share() {
	local t0=$1 budget=$2 now=$3 left=$4 jobs=$5 rounds share
	[ "$jobs" -ge 1 ] || jobs=1
	[ "$left" -ge 1 ] || left=1
	rounds=$(( (left + jobs - 1) / jobs ))
	share=$(( (t0 + budget - 120 - now) / rounds ))
	[ "$share" -ge 300 ] || share=300
	echo "$share"
}

# once_skip K/N: the bats tag filter of guest K of the N that one test run
# boots: tests tagged once-1 or once-2 (the tools on the module's output,
# the same on every kernel) run in one guest only, group G in guest K when
# (G - 1) % N == K - 1.  Prints "!once-2" and the like, or nothing when
# this guest runs every group; fails on anything but 1 <= K <= N.
# (tests/guest/run.sh; tested by tests/host/run-share.bats.)
once_skip() {
	local k n g skip=
	if [[ ! $1 =~ ^([1-9][0-9]{0,3})/([1-9][0-9]{0,3})$ ]]; then
		echo "once_skip: '$1' is not K/N" >&2
		return 1
	fi
	k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
	if [ "$k" -gt "$n" ]; then
		echo "once_skip: guest $k of $n" >&2
		return 1
	fi
	for g in 1 2; do
		[ $(( (g - 1) % n )) -eq $((k - 1)) ] || skip=${skip:+$skip,}!once-$g
	done
	echo "$skip"
}

# symcache_fill DIR: DIR/symcache, the symbols of the programs that show
# up in every guest's recordings (offsample-symbolize --fill-cache), read
# on the host; tests/guest/run.sh OUTDIR copies OUTDIR/../symcache.  Run
# from the top of the tree.  (tests/run.sh, tests/vm/test-matrix.sh.)
symcache_fill() {
	local files=() c f vdir
	for c in bash dash perl cat sleep tee dmesg udevadm awk sed grep kmod; do
		f=$(command -v "$c") && files+=("$(readlink -f "$f")")
	done
	for f in /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6 \
	    /lib/x86_64-linux-gnu/libkmod.so.2 build/offsample-*; do
		[ -f "$f" ] && files+=("$(readlink -f "$f")")
	done
	# The runtimes of tests/guest/62-jit.bats (libjvm alone takes a
	# minute to read under emulation).
	f=$(command -v java) && f=$(readlink -f "$f") && f=${f%/bin/java} &&
		for f in "$f/bin/java" "$f/lib/libjli.so" "$f/lib/server/libjvm.so"; do
			[ -f "$f" ] && files+=("$f")
		done
	f=$(command -v node) && files+=("$(readlink -f "$f")")
	for f in /lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libgcc_s.so.1 \
	    /lib/x86_64-linux-gnu/libm.so.6 /lib/x86_64-linux-gnu/libz.so.1; do
		[ -f "$f" ] && files+=("$(readlink -f "$f")")
	done
	vdir=$(python3 -c 'import os, virtme; print(os.path.dirname(virtme.__file__))' 2>/dev/null) &&
		[ -f "$vdir/guest/bin/virtme-ng-init" ] && files+=("$vdir/guest/bin/virtme-ng-init")
	tools/offsample-symbolize --fill-cache --cache-dir "$1/symcache" "${files[@]}"
}
