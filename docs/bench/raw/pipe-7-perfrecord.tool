Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 10.103 MB /tmp/perf-sched.data (41694 samples) ]
-rw------- 1 root root 10606502 Nov 21 10:38 /tmp/perf-sched.data
