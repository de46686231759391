Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
[ perf record: Captured and wrote 10.163 MB /tmp/perf-sched.data (41974 samples) ]
-rw------- 1 root root 10669238 Nov 27 17:07 /tmp/perf-sched.data
