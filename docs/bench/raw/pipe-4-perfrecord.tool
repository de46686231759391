Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
6 out of order events recorded.
[ perf record: Captured and wrote 10.129 MB /tmp/perf-sched.data (41798 samples) ]
-rw------- 1 root root 10633374 Nov 21 10:26 /tmp/perf-sched.data
