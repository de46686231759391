Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
1 out of order events recorded.
[ perf record: Captured and wrote 10.090 MB /tmp/perf-sched.data (41648 samples) ]
-rw------- 1 root root 10592462 Nov 21 10:14 /tmp/perf-sched.data
