Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 9.932 MB /tmp/perf-sched.data (42057 samples) ]
-rw------- 1 root root 10426811 Nov 27 20:14 /tmp/perf-sched.data
