Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 10.172 MB /tmp/perf-sched.data (42033 samples) ]
-rw------- 1 root root 10678742 Nov 27 16:56 /tmp/perf-sched.data
