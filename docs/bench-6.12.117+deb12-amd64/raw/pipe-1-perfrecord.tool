Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 10.016 MB /tmp/perf-sched.data (42455 samples) ]
-rw------- 1 root root 10515243 Nov 27 19:58 /tmp/perf-sched.data
