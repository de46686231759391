Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
4 out of order events recorded.
[ perf record: Captured and wrote 10.159 MB /tmp/perf-sched.data (42062 samples) ]
-rw------- 1 root root 10664774 Nov 27 16:45 /tmp/perf-sched.data
