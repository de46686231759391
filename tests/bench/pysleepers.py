# SPDX-License-Identifier: GPL-2.0
"""Python threads that sleep at a known depth (make bench, section python).

    python3 pysleepers.py -n THREADS -d DEPTH [--distinct]

THREADS threads each call DEPTH nested Python functions, then sleep in
time.sleep(): every thread's stack holds DEPTH + 2 Python frames (the
thread's run() and its bootstrap above them).  By default every thread
runs the same functions (level_0 ... level_{DEPTH-1}): the names are
shared.  With --distinct thread I runs functions of its own
(t{I}_level_{J}), so that THREADS x DEPTH distinct names are interned:
the memory names hold.  Prints "ready THREADS DEPTH" when every thread
sleeps, then sleeps until killed.
"""
import sys
import threading
import time


def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def main():
    n, depth, distinct = 100, 10, False
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == '-n' and args:
            n = int(args.pop(0))
        elif a == '-d' and args:
            depth = int(args.pop(0))
        elif a == '--distinct':
            distinct = True
        else:
            usage()
    if n < 1 or depth < 1:
        usage()
    ready = threading.Barrier(n + 1)

    def bottom():
        ready.wait()
        while True:
            time.sleep(100000)

    # One chain of DEPTH functions, each calling the next, the last one
    # calling bottom(); built from source so that each has its own name.
    def chain(prefix):
        env = {'bottom': bottom}
        src = []
        for j in range(depth):
            nxt = '%s_level_%d()' % (prefix, j + 1) if j + 1 < depth else 'bottom()'
            src.append('def %s_level_%d():\n    %s\n' % (prefix, j, nxt))
        exec(compile(''.join(src), __file__, 'exec'), env)
        return env['%s_level_0' % prefix]

    shared = chain('same')
    for i in range(n):
        fn = chain('t%d' % i) if distinct else shared
        threading.Thread(target=fn, daemon=True).start()
    ready.wait()
    print('ready %d %d' % (n, depth), flush=True)
    while True:
        time.sleep(100000)


if __name__ == '__main__':
    main()
