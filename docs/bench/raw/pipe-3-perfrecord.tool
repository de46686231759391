Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 10.091 MB /tmp/perf-sched.data (41643 samples) ]
-rw------- 1 root root 10594182 Nov 21 10:22 /tmp/perf-sched.data
