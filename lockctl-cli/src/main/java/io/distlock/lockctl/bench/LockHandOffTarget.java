package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import io.distlock.RemoteLock;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The lock hand-off in the election's conditions, a baseline for {@code --workload failover} on any lock URI: each
 * candidate is a thread that waits in {@link io.distlock.RemoteLocker#lock(String) lock()} on the election's name and
 * "leads" while it holds the lock; stepping down releases the lock and the thread waits in {@code lock()} again, behind
 * the others. Beside the store's election in one run (the same idle worker JVMs, the same stamps), the paired ratio is
 * what the election's machinery costs over the store's bare lock hand-off. Spec: {@value #PREFIX} followed by the lock
 * URI; the lock workloads measure the URI's lock, as that URI would.
 */
final class LockHandOffTarget implements BenchTarget {

    /** A target spec's prefix naming this baseline. */
    static final String PREFIX = "handoff:";

    private final DistlockTarget target;
    private final List<Thread> candidates = new CopyOnWriteArrayList<>();

    LockHandOffTarget(String spec) {
        this.target = new DistlockTarget(spec.substring(PREFIX.length()));
    }

    @Override
    public Held acquire(String key) throws InterruptedException {
        return target.acquire(key);
    }

    @Override
    public Held acquire(String key, LockKind kind, int permits) throws InterruptedException {
        return target.acquire(key, kind, permits);
    }

    /**
     * A thread waiting in {@code lock(election)}; {@code elected} runs on it as the lock is granted. Stepping down
     * releases the lock (returning once the store has been told) and then sends the thread back to {@code lock()}.
     */
    @Override
    public Candidate join(String election, String identity, Runnable elected) {
        AtomicReference<RemoteLock> held = new AtomicReference<>();
        Semaphore steppedDown = new Semaphore(0);
        Thread candidate = new Thread(
                () -> {
                    try {
                        while (true) {
                            held.set(target.hold(election, LockKind.LOCK, 0));
                            elected.run();
                            steppedDown.acquire();
                        }
                    } catch (InterruptedException e) {
                        // closing
                    }
                },
                "handoff-candidate-" + identity);
        candidate.setDaemon(true);
        candidates.add(candidate);
        candidate.start();
        return () -> {
            RemoteLock lock = held.getAndSet(null);
            if (lock == null) {
                throw new IllegalStateException("Candidate " + identity + " was told to step down, but holds no lock");
            }
            lock.release();
            steppedDown.release();
        };
    }

    @Override
    public OptionalLong storeRequests() {
        return target.storeRequests();
    }

    @Override
    public void close() {
        candidates.forEach(Thread::interrupt);
        target.close();
    }
}
