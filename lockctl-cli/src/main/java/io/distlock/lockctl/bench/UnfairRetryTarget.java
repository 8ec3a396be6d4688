package io.distlock.lockctl.bench;

import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The unfair baseline on any lock URI: seed 000's old algorithm's shape, as its section 4 describes it. No queue: one
 * soft attempt ({@code tryLock}), and after each failure a random sleep of 0 to {@code min(50 x attempt, 1000)} ms
 * before the next. A holder that releases and asks again at once finds the key free while the others sleep, so a few
 * processes take most grants; beside the backend's own waiting (a fair queue on ZooKeeper) it shows what the queue
 * buys. Spec: {@value #PREFIX} followed by the lock URI.
 */
final class UnfairRetryTarget implements BenchTarget {

    /** A target spec's prefix naming this baseline. */
    static final String PREFIX = "unfair:";

    private static final long STEP_MILLIS = 50;
    private static final long MAX_SLEEP_MILLIS = 1000;

    private final DistlockTarget target;

    UnfairRetryTarget(String spec) {
        this.target = new DistlockTarget(spec.substring(PREFIX.length()));
    }

    @Override
    public Held acquire(String key) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            Held held = target.tryAcquire(key);
            if (held != null) {
                return held;
            }
            Thread.sleep(ThreadLocalRandom.current().nextLong(Math.min(STEP_MILLIS * attempt, MAX_SLEEP_MILLIS) + 1));
        }
    }

    @Override
    public OptionalLong storeRequests() {
        return target.storeRequests();
    }

    @Override
    public void close() {
        target.close();
    }
}
