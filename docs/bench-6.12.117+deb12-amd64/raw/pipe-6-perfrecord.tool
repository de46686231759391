Events disabled
Events enabled
[ perf record: Woken up 39 times to write data ]
[ perf record: Captured and wrote 9.877 MB /tmp/perf-sched.data (41817 samples) ]
-rw------- 1 root root 10369059 Nov 27 20:25 /tmp/perf-sched.data
