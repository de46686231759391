Events disabled
Events enabled
[ perf record: Woken up 39 times to write data ]
[ perf record: Captured and wrote 9.888 MB /tmp/perf-sched.data (41877 samples) ]
-rw------- 1 root root 10380723 Nov 27 20:30 /tmp/perf-sched.data
