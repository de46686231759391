Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
2 out of order events recorded.
[ perf record: Captured and wrote 10.151 MB /tmp/perf-sched.data (41996 samples) ]
-rw------- 1 root root 10656518 Nov 27 16:51 /tmp/perf-sched.data
