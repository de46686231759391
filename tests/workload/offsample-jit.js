// SPDX-License-Identifier: GPL-2.0
//
// A Node.js workload for tests/guest/62-jit.bats: the main thread takes
// turns between spinWork() (on-CPU) and napWork(), which blocks in
// Atomics.wait() (off-CPU under the JavaScript function).  Both are
// warmed up first so that V8 compiles them.  Prints "ready PID" once warm;
// run it with --perf-basic-prof (or --perf-prof), --no-turbo-inlining.
'use strict';
const cell = new Int32Array(new SharedArrayBuffer(4));
let sink = 0;

function spinWork(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += i ^ (s >>> 3);
	return s;
}

function napWork(ms) {
	sink += ms;
	return Atomics.wait(cell, 0, 0, ms);
}

for (let i = 0; i < 20000; i++)
	sink += spinWork(1000);
for (let i = 0; i < 20000; i++)
	napWork(0);
console.log('ready ' + process.pid);
for (;;) {
	sink += spinWork(200000);
	napWork(30);
}
