Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
2 out of order events recorded.
[ perf record: Captured and wrote 10.120 MB /tmp/perf-sched.data (41844 samples) ]
-rw------- 1 root root 10624414 Nov 21 10:30 /tmp/perf-sched.data
