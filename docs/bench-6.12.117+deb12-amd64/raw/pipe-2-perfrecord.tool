Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 9.998 MB /tmp/perf-sched.data (42375 samples) ]
-rw------- 1 root root 10496699 Nov 27 20:03 /tmp/perf-sched.data
