Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 9.946 MB /tmp/perf-sched.data (42130 samples) ]
-rw------- 1 root root 10442195 Nov 27 20:09 /tmp/perf-sched.data
