#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per function from an insnprof run (tests/bench/insnprof.sh).

    tests/bench/insnprof/symbolize.py OUTDIR [TOP]

OUTDIR holds blocks.1 (the plugin's counts between the two marks: block
start address, instructions), kallsyms (the guest's, read while the module
was loaded) and stats.0/stats.1 (the module's stats around those ticks).
Each block is the function whose symbol starts at or below it (inline
functions count in their callers).  Prints the TOP (40) functions with
their instructions per full capture and share of all, and the totals.
"""
import bisect
import os
import sys

# The stats files are read as make bench's report reads them.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report import read_stats  # noqa: E402


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    syms = []
    with open(os.path.join(out, 'kallsyms')) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in 'tTwW':
                continue
            name = p[2] + (' ' + p[3] if len(p) > 3 else '')
            syms.append((int(p[0], 16), name))
    syms.sort()
    starts = [s[0] for s in syms]
    per = {}
    total = kernel = 0
    with open(os.path.join(out, 'blocks.1')) as f:
        for line in f:
            a, n = line.split()
            a, n = int(a, 16), int(n)
            total += n
            if a < 0xffff800000000000:
                name = '[user]'
            else:
                kernel += n
                i = bisect.bisect_right(starts, a) - 1
                name = syms[i][1] if i >= 0 else '[unknown]'
            per[name] = per.get(name, 0) + n
    s0 = read_stats(os.path.join(out, 'stats.0'))
    s1 = read_stats(os.path.join(out, 'stats.1'))
    d = {k: v - s0.get(k, 0) for k, v in s1.items() if isinstance(v, int)}
    caps = d.get('cache_misses', 0)
    ticks = d.get('ticks', 0)
    visited = d.get('threads_visited', 0)
    mod = sum(n for k, n in per.items() if k.endswith('[offsample]'))
    print('%d ticks, %d threads visited, %d full captures; instructions '
          'executed by the guest in them: %d (kernel %d, user %d)'
          % (ticks, visited, caps, total, kernel, total - kernel))
    print('in the module\'s own functions: %d (%.1f%%)'
          % (mod, 100.0 * mod / total if total else 0))
    print()
    print('%14s %10s %6s  %s' % ('instructions', 'per capture', 'share', 'function'))
    for name, n in sorted(per.items(), key=lambda x: (-x[1], x[0]))[:top]:
        print('%14d %10.1f %5.1f%%  %s'
              % (n, n / caps if caps else 0, 100.0 * n / total, name))


if __name__ == '__main__':
    main()
