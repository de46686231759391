# SPDX-License-Identifier: GPL-2.0
"""A Python program whose threads wait the ways services do (issue 44).

    python3 offsample-pywait.py [--depth N] [--churn] [--gil]

Threads, each named after its function: hold_lock (threading.Lock),
wait_queue (queue.Queue.get), serve (socket accept), spin (a CPU loop),
recurse (N nested calls, then a sleep), via_c (a function that map(),
C code, calls: a second C-level evaluation); the main thread sleeps in
Sleeper.nap.  With --churn, one more thread, churn, starts short-lived
threads (short_life: a 2 ms sleep) one after another, so that threads
exit while they are sampled.  With --gil, a second spinner, spin2: the
two take turns with the GIL, each waiting for it while the other runs.  Prints "ready" when every thread is at its
wait, then runs until killed.
"""
import queue
import socket
import sys
import threading
import time

started = threading.Barrier(7)


class Sleeper:
    def nap(self):
        started.wait()
        print("ready", flush=True)
        while True:
            time.sleep(1000)


def hold_lock(lk):
    started.wait()
    lk.acquire()


def wait_queue(q):
    started.wait()
    q.get()


def serve(s):
    started.wait()
    s.accept()


def spin():
    started.wait()
    x = 0
    while True:
        x += 1


def spin2():
    spin()


def recurse(n):
    if n > 0:
        return recurse(n - 1)
    started.wait()
    time.sleep(100000)


def wait_event(ev):
    started.wait()
    ev.wait()


def via_c(ev):
    list(map(wait_event, [ev]))


def short_life():
    time.sleep(0.002)


def churn():
    started.wait()
    while True:
        t = threading.Thread(target=short_life, name="short_life")
        t.start()
        t.join()


def main():
    args = sys.argv[1:]
    depth = int(args[args.index("--depth") + 1]) if "--depth" in args else 5
    extra = [(churn, ())] if "--churn" in args else []
    extra += [(spin2, ())] if "--gil" in args else []
    global started
    started = threading.Barrier(7 + len(extra))
    lk = threading.Lock()
    lk.acquire()
    q = queue.Queue()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    for fn, args in ((hold_lock, (lk,)), (wait_queue, (q,)), (serve, (s,)),
                     (spin, ()), (recurse, (depth,)),
                     (via_c, (threading.Event(),))) + tuple(extra):
        threading.Thread(target=fn, args=args, name=fn.__name__,
                         daemon=True).start()
    Sleeper().nap()


main()
