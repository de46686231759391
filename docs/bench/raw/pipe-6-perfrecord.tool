Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 10.113 MB /tmp/perf-sched.data (41704 samples) ]
-rw------- 1 root root 10616694 Nov 21 10:34 /tmp/perf-sched.data
