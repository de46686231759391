Events disabled
Events enabled
[ perf record: Woken up 40 times to write data ]
Warning:
3 out of order events recorded.
[ perf record: Captured and wrote 10.141 MB /tmp/perf-sched.data (41964 samples) ]
-rw------- 1 root root 10645670 Nov 27 16:34 /tmp/perf-sched.data
