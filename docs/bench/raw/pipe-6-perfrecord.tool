Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
1 out of order events recorded.
[ perf record: Captured and wrote 10.147 MB /tmp/perf-sched.data (42059 samples) ]
-rw------- 1 root root 10652342 Nov 27 17:02 /tmp/perf-sched.data
