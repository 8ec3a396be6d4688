package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link ThreadCpu}: a thread's CPU, wake-ups and allocations, under its Java name's group. */
class ThreadCpuTest {

    private static final long BUSY_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    /** Where the allocating thread's arrays go, so that they are not optimised away. */
    private static volatile byte[] sink;

    @BeforeAll
    static void onLinux() {
        assumeThat(Files.isDirectory(Path.of("/proc/self/task")))
                .as("Linux /proc")
                .isTrue();
    }

    @Test
    void group_writesEveryRunOfDigitsAsN() {
        assertThat(ThreadCpu.group("main-SendThread(127.0.0.1:2181)")).isEqualTo("main-SendThread(N.N.N.N:N)");
        assertThat(ThreadCpu.group("pool-4-thread-12")).isEqualTo("pool-N-thread-N");
    }

    @Test
    void since_aThreadThatBurnedCpu_isCountedUnderItsWholeJavaName() throws Exception {
        Map<String, ThreadCpu> before = ThreadCpu.snapshot();
        // longer than the kernel's 15 characters: only the thread dump knows the whole name
        Thread busy = startBusy("thread-cpu-test-busy-7");

        ThreadCpu group = groupOf(ThreadCpu.since(before), "thread-cpu-test-busy-N");
        LockSupport.unpark(busy);
        // the thread measured its own CPU time to 300 ms; the kernel's clock is another reading of the same time
        assertThat(group.cpuNanos()).isGreaterThanOrEqualTo(BUSY_NANOS * 9 / 10);
    }

    @Test
    void since_aThreadWokenFiftyTimes_countsAtLeastFiftySwitches() throws Exception {
        Thread sleeper = new Thread(
                () -> {
                    for (int i = 0; i < 50; i++) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                    }
                    LockSupport.park(); // alive at the second snapshot: a thread that ended is missing from it
                },
                "thread-cpu-test-sleeper-3");
        Map<String, ThreadCpu> before = ThreadCpu.snapshot();
        startAndAwaitParked(sleeper);

        ThreadCpu group = groupOf(ThreadCpu.since(before), "thread-cpu-test-sleeper-N");
        LockSupport.unpark(sleeper);
        assertThat(group.switches()).isGreaterThanOrEqualTo(50);
    }

    @Test
    void since_aThreadThatAllocatedTenMegabytes_countsThemUnderItsGroup() throws Exception {
        Thread allocating = new Thread(
                () -> {
                    for (int i = 0; i < 100; i++) {
                        sink = new byte[100 * 1024];
                    }
                    LockSupport.park();
                },
                "thread-cpu-test-allocating-5");
        Map<String, ThreadCpu> before = ThreadCpu.snapshot();
        startAndAwaitParked(allocating);

        ThreadCpu group = groupOf(ThreadCpu.since(before), "thread-cpu-test-allocating-N");
        LockSupport.unpark(allocating);
        assertThat(group.allocatedBytes()).isGreaterThanOrEqualTo(100 * 100 * 1024);
        assertThat(group.cpuNanos()).isPositive(); // the same group as the kernel's figures, not one of its own
    }

    @Test
    void since_listsTheLargestCpuFirst_andLeavesOutGroupsThatUsedNothing() throws Exception {
        Map<String, ThreadCpu> before = ThreadCpu.snapshot();
        Thread busy = startBusy("thread-cpu-test-first-1");

        List<ThreadCpu> used = ThreadCpu.since(before);
        LockSupport.unpark(busy);
        assertThat(used).hasSizeGreaterThan(1);
        assertThat(used).isSortedAccordingTo((a, b) -> Long.compare(b.cpuNanos(), a.cpuNanos()));
        assertThat(used).allSatisfy(t -> assertThat(t.cpuNanos() + t.switches() + t.allocatedBytes())
                .isPositive());
    }

    /**
     * A thread that spins until it has used {@link #BUSY_NANOS} of CPU by its own clock, then parks until unparked:
     * alive at the second snapshot, since a thread that ended is missing from it.
     */
    private static Thread startBusy(String name) throws InterruptedException {
        Thread busy = new Thread(
                () -> {
                    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                    long start = threads.getCurrentThreadCpuTime();
                    while (threads.getCurrentThreadCpuTime() - start < BUSY_NANOS) {
                        Thread.onSpinWait();
                    }
                    LockSupport.park();
                },
                name);
        startAndAwaitParked(busy);
        return busy;
    }

    private static void startAndAwaitParked(Thread thread) throws InterruptedException {
        thread.setDaemon(true);
        thread.start();
        while (thread.getState() != Thread.State.WAITING) {
            Thread.sleep(5);
        }
    }

    private static ThreadCpu groupOf(List<ThreadCpu> used, String name) {
        return used.stream()
                .filter(t -> t.threads().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no group " + name + " in " + used));
    }
}
