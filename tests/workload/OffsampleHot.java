// SPDX-License-Identifier: GPL-2.0
//
// A Java workload for tests/guest/62-jit.bats: two threads in methods the
// JIT compiles.  "osj-spin" runs spinWork() for good (on-CPU samples whose
// leaf is compiled Java code); "osj-nap" calls napWork(), which sleeps in
// Thread.sleep() (off-CPU samples under the compiled caller).  Both are
// warmed up first, with the same paths they take afterwards (a sleep of
// 0 ms), so that the compiled code does not fall back to the interpreter
// when they start.  Prints "ready PID" once warm; run it with
// -XX:+PreserveFramePointer so that compiled frames can be walked.
public class OffsampleHot {
	static volatile long sink;

	static long spinWork(int n)
	{
		long s = 0;

		for (int i = 0; i < n; i++)
			s += i ^ (s >>> 3);
		return s;
	}

	static void napWork(int i, long ms) throws InterruptedException
	{
		sink += i * 31L;
		Thread.sleep(ms);
	}

	public static void main(String[] args) throws Exception
	{
		for (int i = 0; i < 20000; i++)
			sink += spinWork(1000);
		for (int i = 0; i < 20000; i++)
			napWork(i, 0);
		Thread spin = new Thread(() -> {
			for (;;)
				sink += spinWork(100000);
		}, "osj-spin");
		Thread nap = new Thread(() -> {
			try {
				for (int i = 0;; i++)
					napWork(i, 20);
			} catch (InterruptedException e) {
				return;
			}
		}, "osj-nap");
		spin.setDaemon(true);
		nap.setDaemon(true);
		spin.start();
		nap.start();
		System.out.println("ready " + ProcessHandle.current().pid());
		System.out.flush();
		nap.join();
	}
}
