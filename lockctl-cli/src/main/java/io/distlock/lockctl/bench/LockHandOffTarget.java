package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The lock hand-off in the election's conditions, a baseline for {@code --workload failover} on any target that takes
 * a lock (a lock URI or a lock peer): each candidate is a thread that waits in the target's lock on the election's
 * name and "leads" while it holds it; stepping down releases the lock on that thread (a peer's lock may be released
 * only by the thread that took it) and the thread waits for it again, behind the others. Beside the store's election
 * in one run (the same idle worker JVMs, the same stamps), the paired ratio is what the election costs over the
 * store's bare lock hand-off. Spec: {@value #PREFIX} followed by the target's spec; the lock workloads measure that
 * target as it would be measured without the prefix.
 */
final class LockHandOffTarget implements BenchTarget {

    /** A target spec's prefix naming this baseline. */
    static final String PREFIX = "handoff:";

    /** How long a step-down waits for its candidate's thread to release the lock. */
    private static final long STEP_DOWN_TIMEOUT_SECONDS = 60;

    private final BenchTarget target;
    private final List<Thread> candidates = new CopyOnWriteArrayList<>();
    /** Set by {@link #close}: a candidate's wait that ends with the target closed ends its thread quietly. */
    private volatile boolean closing;

    LockHandOffTarget(String spec) throws Exception {
        this.target = Targets.open(spec.substring(PREFIX.length()));
    }

    @Override
    public Held acquire(String key) throws Exception {
        return target.acquire(key);
    }

    @Override
    public Held acquire(String key, LockKind kind, int permits) throws Exception {
        return target.acquire(key, kind, permits);
    }

    /**
     * A thread waiting for the lock on {@code election}; {@code elected} runs on it as the lock is granted. Stepping
     * down has that thread release the lock, returns once it has (the store told), and the thread waits again.
     */
    @Override
    public Candidate join(String election, String identity, Runnable elected) {
        AtomicBoolean leading = new AtomicBoolean();
        AtomicReference<Exception> failed = new AtomicReference<>();
        Semaphore stepDown = new Semaphore(0);
        Semaphore released = new Semaphore(0);
        Thread candidate = new Thread(
                () -> {
                    try {
                        while (true) {
                            Held held = target.acquire(election);
                            leading.set(true);
                            elected.run();
                            stepDown.acquire();
                            held.release();
                            released.release();
                        }
                    } catch (InterruptedException e) {
                        // closing
                    } catch (Exception e) {
                        if (closing) {
                            return; // the target closed under a waiting candidate: the end of the run
                        }
                        failed.set(e);
                        released.release();
                        // into the worker's log, which a run that waits for this candidate in vain names
                        throw new IllegalStateException(
                                "Candidate " + identity + " could not take or release the lock on " + election, e);
                    }
                },
                "handoff-candidate-" + identity);
        candidate.setDaemon(true);
        candidates.add(candidate);
        candidate.start();
        return () -> {
            if (!leading.compareAndSet(true, false)) {
                throw new IllegalStateException("Candidate " + identity + " was told to step down, but holds no lock");
            }
            stepDown.release();
            if (!released.tryAcquire(STEP_DOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Candidate " + identity + " did not release the lock on " + election
                        + " within " + STEP_DOWN_TIMEOUT_SECONDS + " s");
            }
            Exception e = failed.get();
            if (e != null) {
                throw new IllegalStateException(
                        "Candidate " + identity + " could not take or release the lock on " + election, e);
            }
        };
    }

    @Override
    public OptionalLong storeRequests() {
        return target.storeRequests();
    }

    /**
     * Closes the target, then interrupts the candidates' threads: a wait the target's close does not end (a peer's lock
     * whose client leaves its waiters parked) ends with the interrupt.
     */
    @Override
    public void close() throws Exception {
        closing = true;
        try {
            target.close();
        } finally {
            candidates.forEach(Thread::interrupt);
        }
    }
}
