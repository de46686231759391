Events disabled
Events enabled
[ perf record: Woken up 39 times to write data ]
[ perf record: Captured and wrote 9.936 MB /tmp/perf-sched.data (42086 samples) ]
-rw------- 1 root root 10431563 Nov 27 20:20 /tmp/perf-sched.data
