package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** Broken: declares itself fair, but serves the waiters of a key last-come-first-served (a stack, not a queue). */
public final class LifoProvider extends BrokenProvider {

    private static final Map<String, Deque<Object>> STACKS = new ConcurrentHashMap<>();

    /** For the service loader. */
    public LifoProvider() {
        super("broken-lifo");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                Deque<Object> stack = STACKS.computeIfAbsent(r.key(), k -> new ArrayDeque<>());
                Object me = new Object();
                synchronized (stack) {
                    stack.push(me);
                    try {
                        while (true) {
                            if (stack.peek() == me) {
                                Optional<Lease> lease = correct.tryAcquire(r);
                                if (lease.isPresent()) {
                                    return lease;
                                }
                            }
                            if (d.hasPassed()) {
                                return Optional.empty();
                            }
                            stack.wait(Math.max(1, d.remainingNanos(2_000_000) / 1_000_000));
                        }
                    } finally {
                        stack.remove(me);
                        stack.notifyAll();
                    }
                }
            }
        };
    }
}
