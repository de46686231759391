Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
4 out of order events recorded.
[ perf record: Captured and wrote 10.162 MB /tmp/perf-sched.data (41985 samples) ]
-rw------- 1 root root 10667918 Nov 27 16:39 /tmp/perf-sched.data
