Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
2 out of order events recorded.
[ perf record: Captured and wrote 10.120 MB /tmp/perf-sched.data (41816 samples) ]
-rw------- 1 root root 10624398 Nov 21 10:18 /tmp/perf-sched.data
