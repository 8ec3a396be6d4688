package io.distlock.memory;

import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One named space of in-memory locks: per key a holder and a FIFO queue of waiters, each waiter with its own
 * condition so a release wakes only the next in line. Fencing tokens come from one counter per space, so they grow
 * strictly per key even after an idle key's state is dropped.
 */
final class LockSpace {

    private final String name;
    private final ReentrantLock mutex = new ReentrantLock();
    private final Map<String, KeyState> keys = new HashMap<>();
    private long lastToken;

    /** The holder and the waiters of one key; guarded by the space's mutex. */
    private static final class KeyState {
        MemoryLease holder;
        final ArrayDeque<Condition> queue = new ArrayDeque<>();
    }

    LockSpace(String name) {
        this.name = name;
    }

    Optional<MemoryLease> tryAcquire(LockRequest request, Ticker ticker) {
        mutex.lock();
        try {
            KeyState state = keys.computeIfAbsent(request.key(), k -> new KeyState());
            expire(state);
            if (state.holder == null && state.queue.isEmpty()) {
                return Optional.of(grant(state, request, ticker));
            }
            return Optional.empty();
        } finally {
            forgetIfIdle(request.key());
            mutex.unlock();
        }
    }

    Optional<MemoryLease> acquire(LockRequest request, Ticker ticker, Deadline deadline) throws InterruptedException {
        mutex.lockInterruptibly();
        try {
            KeyState state = keys.computeIfAbsent(request.key(), k -> new KeyState());
            Condition turn = mutex.newCondition();
            state.queue.addLast(turn);
            try {
                while (true) {
                    expire(state);
                    if (state.holder == null && state.queue.peekFirst() == turn) {
                        state.queue.removeFirst();
                        return Optional.of(grant(state, request, ticker));
                    }
                    long wait = deadline.remainingNanos();
                    if (wait <= 0) {
                        return Optional.empty();
                    }
                    if (state.holder != null) {
                        // Wake when the holder's lease would run out, in case it is never released.
                        wait = Math.min(wait, Math.max(1, state.holder.validUntilNanos() - ticker.read()));
                    }
                    turn.awaitNanos(wait);
                }
            } finally {
                if (state.queue.peekFirst() == turn) {
                    state.queue.removeFirst();
                    signalNext(state);
                } else {
                    state.queue.remove(turn);
                }
            }
        } finally {
            forgetIfIdle(request.key());
            mutex.unlock();
        }
    }

    boolean renew(MemoryLease lease, Ticker ticker) {
        mutex.lock();
        try {
            KeyState state = keys.get(lease.key());
            if (state == null || state.holder != lease) {
                return false;
            }
            expire(state);
            if (state.holder != lease) {
                return false;
            }
            lease.renewFrom(ticker.read());
            return true;
        } finally {
            mutex.unlock();
        }
    }

    boolean release(MemoryLease lease) {
        mutex.lock();
        try {
            KeyState state = keys.get(lease.key());
            boolean ours = false;
            if (state != null) {
                expire(state);
                if (state.holder == lease) { // compare-and-delete: only our own grant
                    state.holder = null;
                    signalNext(state);
                    ours = true;
                }
            }
            forgetIfIdle(lease.key());
            return ours;
        } finally {
            mutex.unlock();
        }
    }

    private MemoryLease grant(KeyState state, LockRequest request, Ticker ticker) {
        long now = ticker.read();
        MemoryLease lease = new MemoryLease(
                request.key(),
                request.ownerId(),
                ++lastToken,
                ticker,
                request.leaseTime().toNanos(),
                now);
        state.holder = lease;
        return lease;
    }

    /** Drops a holder whose lease ran out, as a store drops an entry whose TTL passed, and wakes the next waiter. */
    private static void expire(KeyState state) {
        if (state.holder != null && state.holder.expired()) {
            state.holder = null;
            signalNext(state);
        }
    }

    private static void signalNext(KeyState state) {
        Condition next = state.queue.peekFirst();
        if (next != null) {
            next.signal();
        }
    }

    private void forgetIfIdle(String key) {
        KeyState state = keys.get(key);
        if (state != null && state.holder == null && state.queue.isEmpty()) {
            keys.remove(key);
        }
    }

    @Override
    public String toString() {
        return "LockSpace[" + name + "]";
    }
}
