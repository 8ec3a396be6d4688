package io.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's {@code FuzzTester} (from its {@code shedlock-test-support} module), written again: eight threads, two
 * jobs of four threads each, every thread makes its number of increments of its job's plain counter, each as read,
 * sleep 1 ms, write under the job's lock ({@code lockAtMostFor} 5 min, {@code lockAtLeastFor} 5 ms, retried at once
 * when not acquired). A lock that let two threads in loses an increment, and the counts come out short. One thread
 * makes only 10 increments (ShedLock's "short task"). Unlike ShedLock's, whose threads share one provider, half of
 * each job's threads use a second node.
 *
 * <p>Each thread makes {@value #DEFAULT_ITERATIONS} increments by default (ShedLock: 100), bounded for the build's
 * time; {@code -D}{@value #ITERATIONS_PROPERTY}{@code =N} runs a longer fuzz.
 */
final class CounterFuzz {

    /** The system property that sets each thread's increments. */
    static final String ITERATIONS_PROPERTY = "distlock.shedlock.fuzz.iterations";

    private static final int DEFAULT_ITERATIONS = 25;
    private static final int THREADS = 8;
    private static final int SHORT_ITERATIONS = 10;
    private static final Duration LOCK_AT_MOST_FOR = Duration.ofMinutes(5);
    private static final Duration LOCK_AT_LEAST_FOR = Duration.ofMillis(5);

    private final LockProvider nodeA;
    private final LockProvider nodeB;
    private final String name;
    private final int iterations;

    CounterFuzz(LockProvider nodeA, LockProvider nodeB, String name, int iterations) {
        this.nodeA = nodeA;
        this.nodeB = nodeB;
        this.name = name;
        this.iterations = iterations;
    }

    /** Each thread's increments: {@value #ITERATIONS_PROPERTY}, else {@value #DEFAULT_ITERATIONS}. */
    static int iterationsFromProperty() {
        return Integer.getInteger(ITERATIONS_PROPERTY, DEFAULT_ITERATIONS);
    }

    /** Runs the threads to the end and checks both counters. */
    void run() throws Exception {
        Job job1 = new Job(name + "-1");
        Job job2 = new Job(name + "-2");
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            int increments = i == 0 ? Math.min(SHORT_ITERATIONS, iterations) : iterations;
            Job job = i % 2 == 0 ? job1 : job2;
            LockProvider node = (i / 2) % 2 == 0 ? nodeA : nodeB;
            tasks.add(() -> increment(node, job, increments));
        }
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            for (Future<Void> task : threads.invokeAll(tasks)) {
                task.get();
            }
        } finally {
            threads.shutdownNow();
        }

        int perJob = THREADS / 2;
        assertThat(job2.counter).as("job 2's count").isEqualTo(perJob * iterations);
        assertThat(job1.counter)
                .as("job 1's count")
                .isEqualTo((perJob - 1) * iterations + Math.min(SHORT_ITERATIONS, iterations));
    }

    private static Void increment(LockProvider node, Job job, int increments) throws InterruptedException {
        for (int done = 0; done < increments; ) {
            Optional<SimpleLock> lock = node.lock(job.config());
            if (lock.isPresent()) {
                int read = job.counter;
                Thread.sleep(1);
                job.counter = read + 1;
                lock.get().unlock();
                done++;
            }
        }
        return null;
    }

    /** One job: its lock's name and its counter, read and written apart under the lock, so that a race loses an increment. */
    private static final class Job {
        private final String lockName;
        private volatile int counter;

        Job(String lockName) {
            this.lockName = lockName;
        }

        LockConfiguration config() {
            return new LockConfiguration(ClockProvider.now(), lockName, LOCK_AT_MOST_FOR, LOCK_AT_LEAST_FOR);
        }
    }
}
