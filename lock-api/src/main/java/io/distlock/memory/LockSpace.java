package io.distlock.memory;

import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * One named space of in-memory locks: per key (and {@link LockKind.Space}: a lock, a read-write lock and a semaphore on
 * one key are apart) the holders and a FIFO queue of waiters, served by the grant rule of {@link LockRequest}. A waiter is a future, not a
 * thread: a release hands the lock straight to the next waiter in line and completes its future, so any number of
 * asynchronous waiters costs no thread. Deadlines and the expiry of a holder that is never released are watched by one
 * timer thread for the whole process. Fencing tokens come from one counter per space, so they grow strictly per key
 * even after an idle key's state is dropped.
 */
final class LockSpace {

    /** Watches deadlines and holders' expiry for every space; only ever takes a space's mutex briefly. */
    private static final ScheduledExecutorService TIMER = timer();

    private final String name;
    private final ReentrantLock mutex = new ReentrantLock();
    private final Map<Name, KeyState> keys = new HashMap<>();
    private long lastToken;

    /** Where a grant lives: its kind's space and its key. */
    private record Name(LockKind.Space space, String key) {
        static Name of(LockRequest request) {
            return new Name(request.kind().space(), request.key());
        }

        static Name of(MemoryLease lease) {
            return new Name(lease.kind().space(), lease.key());
        }
    }

    /** The holders and the waiters of one key; guarded by the space's mutex. */
    private static final class KeyState {
        final List<MemoryLease> holders = new ArrayList<>();
        final ArrayDeque<Waiter> queue = new ArrayDeque<>();
        ScheduledFuture<?> expiryCheck;
    }

    /** One queued acquisition; its future completes with the grant, or empty at the deadline. */
    private static final class Waiter {
        final LockRequest request;
        final Ticker ticker;
        final long delayNanos;
        final Deadline deadline;
        final CompletableFuture<Optional<MemoryLease>> future = new CompletableFuture<>();

        Waiter(LockRequest request, Ticker ticker, long delayNanos, Deadline deadline) {
            this.request = request;
            this.ticker = ticker;
            this.delayNanos = delayNanos;
            this.deadline = deadline;
        }
    }

    /** A grant made under the mutex, handed to its waiter after the mutex is released. */
    private record Handover(Waiter waiter, MemoryLease lease) {}

    LockSpace(String name) {
        this.name = name;
    }

    Optional<MemoryLease> tryAcquire(LockRequest request, Ticker ticker, long delayNanos) {
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            KeyState state = keys.computeIfAbsent(Name.of(request), k -> new KeyState());
            expire(state, handovers);
            checkLimit(state, request);
            if (state.queue.isEmpty() && grantable(state, request)) {
                return Optional.of(grant(state, request, ticker, delayNanos));
            }
            return Optional.empty();
        } finally {
            forgetIfIdle(Name.of(request));
            mutex.unlock();
            handOver(handovers);
        }
    }

    /**
     * Joins the key's queue; the future completes with the lease when this waiter's turn comes, with empty once the
     * deadline passed. Cancelling it leaves the queue; a grant that wins the race against the cancellation is
     * released.
     */
    CompletableFuture<Optional<MemoryLease>> acquireAsync(
            LockRequest request, Ticker ticker, long delayNanos, Deadline deadline) {
        Waiter waiter = new Waiter(request, ticker, delayNanos, deadline);
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            KeyState state = keys.computeIfAbsent(Name.of(request), k -> new KeyState());
            expire(state, handovers);
            try {
                checkLimit(state, request);
            } catch (RuntimeException e) {
                forgetIfIdle(Name.of(request));
                throw e;
            }
            if (state.queue.isEmpty() && grantable(state, request)) {
                handovers.add(new Handover(waiter, grant(state, request, ticker, delayNanos)));
            } else {
                state.queue.addLast(waiter);
                armExpiry(Name.of(request), state);
            }
        } finally {
            mutex.unlock();
            handOver(handovers);
        }
        if (!waiter.future.isDone()) {
            if (deadline.isBounded()) {
                armDeadline(waiter);
            }
            waiter.future.whenComplete((lease, failure) -> {
                if (waiter.future.isCancelled()) {
                    withdraw(waiter);
                }
            });
        }
        return waiter.future;
    }

    /** The blocking form: waits on the asynchronous one; an interrupt withdraws the waiter. */
    Optional<MemoryLease> acquire(LockRequest request, Ticker ticker, long delayNanos, Deadline deadline)
            throws InterruptedException {
        CompletableFuture<Optional<MemoryLease>> future = acquireAsync(request, ticker, delayNanos, deadline);
        try {
            return future.get();
        } catch (InterruptedException e) {
            if (!future.cancel(false)) {
                future.getNow(Optional.empty()).ifPresent(this::release); // granted just now: nobody will use it
            }
            throw e;
        } catch (ExecutionException e) {
            throw new IllegalStateException("In-memory acquisition failed", e.getCause());
        }
    }

    /** Sets the lease to end {@code leaseNanos} from now if it still holds its key; a waiter's expiry check follows. */
    boolean renew(MemoryLease lease, Ticker ticker, long leaseNanos) {
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            KeyState state = keys.get(Name.of(lease));
            if (state == null || !state.holders.contains(lease)) {
                return false;
            }
            expire(state, handovers);
            if (!state.holders.contains(lease)) {
                return false;
            }
            lease.renewFrom(ticker.read(), leaseNanos);
            if (state.expiryCheck != null) {
                state.expiryCheck.cancel(false); // the lease may now end sooner than the check was armed for
                state.expiryCheck = null;
            }
            armExpiry(Name.of(lease), state);
            return true;
        } finally {
            mutex.unlock();
            handOver(handovers);
        }
    }

    boolean release(MemoryLease lease) {
        List<Handover> handovers = new ArrayList<>();
        boolean ours = false;
        mutex.lock();
        try {
            KeyState state = keys.get(Name.of(lease));
            if (state != null) {
                expire(state, handovers);
                if (state.holders.remove(lease)) { // compare-and-delete: only our own grant
                    serveNext(state, handovers);
                    ours = true;
                }
            }
            forgetIfIdle(Name.of(lease));
        } finally {
            mutex.unlock();
        }
        handOver(handovers);
        return ours;
    }

    /**
     * The holders of {@code key} in every space, in grant order, and how many wait; holders whose lease ran out are
     * dropped first, as a store drops an entry whose TTL passed.
     */
    LockState inspect(String key, Clock clock) {
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            return stateOf(key, clock, handovers).orElseGet(() -> new LockState(key, List.of(), OptionalInt.of(0)));
        } finally {
            mutex.unlock();
            handOver(handovers);
        }
    }

    /** Every held key, as {@link #inspect} shows it. */
    List<LockState> listHeld(Clock clock) {
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            return keys.keySet().stream()
                    .map(Name::key)
                    .distinct()
                    .sorted()
                    .flatMap(key -> stateOf(key, clock, handovers).stream())
                    .filter(LockState::held)
                    .toList();
        } finally {
            mutex.unlock();
            handOver(handovers);
        }
    }

    /** Removes every holder of {@code key}, behind their backs, and serves the waiters as after their release. */
    List<LockHolder> breakLock(String key, Clock clock) {
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            List<LockHolder> broken = new ArrayList<>();
            for (LockKind.Space space : LockKind.Space.values()) {
                Name name = new Name(space, key);
                KeyState state = keys.get(name);
                if (state != null) {
                    state.holders.removeIf(MemoryLease::expired);
                    state.holders.forEach(h -> broken.add(holder(h, clock)));
                    state.holders.clear();
                    serveNext(state, handovers);
                    forgetIfIdle(name);
                }
            }
            return broken;
        } finally {
            mutex.unlock();
            handOver(handovers);
        }
    }

    /**
     * Asks every holder of {@code key} in every space to let go: each holder's locker hears it at once, outside the
     * mutex. Holders whose entry ran out are dropped first, as everywhere.
     */
    List<LockHolder> requestRelease(String key, Clock clock) {
        List<Handover> handovers = new ArrayList<>();
        List<MemoryLease> asked = new ArrayList<>();
        List<LockHolder> holders = new ArrayList<>();
        mutex.lock();
        try {
            for (LockKind.Space space : LockKind.Space.values()) {
                KeyState state = keys.get(new Name(space, key));
                if (state != null) {
                    expire(state, handovers);
                    for (MemoryLease h : state.holders) {
                        asked.add(h);
                        holders.add(holder(h, clock));
                    }
                }
            }
        } finally {
            mutex.unlock();
            handOver(handovers);
        }
        asked.forEach(MemoryLease::requestRelease);
        return holders;
    }

    private Optional<LockState> stateOf(String key, Clock clock, List<Handover> handovers) {
        List<LockHolder> holders = new ArrayList<>();
        int waiting = 0;
        boolean known = false;
        for (LockKind.Space space : LockKind.Space.values()) {
            Name name = new Name(space, key);
            KeyState state = keys.get(name);
            if (state != null) {
                known = true;
                expire(state, handovers);
                state.holders.forEach(h -> holders.add(holder(h, clock)));
                waiting += (int)
                        state.queue.stream().filter(w -> !w.future.isDone()).count();
            }
        }
        return known ? Optional.of(new LockState(key, holders, OptionalInt.of(waiting))) : Optional.empty();
    }

    private static LockHolder holder(MemoryLease lease, Clock clock) {
        Instant now = clock.instant();
        long nowNanos = lease.now();
        return LockHolder.of(
                lease.kind(),
                lease.ownerId(),
                Optional.of(now.minusNanos(nowNanos - lease.grantedAtNanos())),
                Optional.of(now.plusNanos(lease.entryEndsNanos() - nowNanos)),
                lease.fencingToken());
    }

    private MemoryLease grant(KeyState state, LockRequest request, Ticker ticker, long delayNanos) {
        MemoryLease lease = new MemoryLease(request, ++lastToken, ticker, ticker.read(), delayNanos);
        state.holders.add(lease);
        return lease;
    }

    /**
     * The grant rule of {@link LockRequest} for a request with nothing waiting ahead of it: an exclusive one when
     * nothing is held, a shared one when nothing exclusive is held and fewer than the smallest limit among itself and
     * the holders are.
     */
    private static boolean grantable(KeyState state, LockRequest request) {
        if (request.exclusive()) {
            return state.holders.isEmpty();
        }
        int limit = request.limit();
        for (MemoryLease holder : state.holders) {
            if (holder.kind().exclusive()) {
                return false;
            }
            limit = Math.min(limit, holder.limit());
        }
        return state.holders.size() < limit;
    }

    /** Refuses a permit whose semaphore is in use with another number of permits. */
    private static void checkLimit(KeyState state, LockRequest request) {
        if (request.kind() != LockKind.PERMIT) {
            return;
        }
        Stream.concat(
                        state.holders.stream().map(MemoryLease::limit),
                        state.queue.stream().map(w -> w.request.limit()))
                .filter(n -> n != request.limit())
                .findFirst()
                .ifPresent(n -> {
                    throw request.permitsInUse(n);
                });
    }

    /** Drops holders whose lease ran out, as a store drops an entry whose TTL passed, and serves the next waiters. */
    private void expire(KeyState state, List<Handover> handovers) {
        state.holders.removeIf(MemoryLease::expired);
        serveNext(state, handovers);
    }

    /** Grants the waiters at the head of the queue, in order, for as long as the grant rule lets the first one in. */
    private void serveNext(KeyState state, List<Handover> handovers) {
        while (!state.queue.isEmpty()) {
            Waiter next = state.queue.peekFirst();
            if (next.future.isDone()) {
                state.queue.pollFirst();
            } else if (grantable(state, next.request)) {
                state.queue.pollFirst();
                handovers.add(new Handover(next, grant(state, next.request, next.ticker, next.delayNanos)));
            } else {
                return;
            }
        }
    }

    /** Completes the waiters' futures outside the mutex; a grant whose waiter gave up meanwhile is released. */
    private void handOver(List<Handover> handovers) {
        for (Handover h : handovers) {
            if (!h.waiter().future.complete(Optional.of(h.lease()))) {
                release(h.lease());
            }
        }
    }

    private void withdraw(Waiter waiter) {
        Name key = Name.of(waiter.request);
        List<Handover> handovers = new ArrayList<>();
        mutex.lock();
        try {
            KeyState state = keys.get(key);
            if (state != null) {
                state.queue.remove(waiter);
                serveNext(state, handovers); // a writer that gives up lets the readers behind it in
                forgetIfIdle(key);
            }
        } finally {
            mutex.unlock();
        }
        handOver(handovers);
    }

    /** Ends the wait with empty once its deadline (on its ticker) has passed. */
    private void armDeadline(Waiter waiter) {
        long left = waiter.deadline.remainingNanos();
        TIMER.schedule(
                () -> {
                    if (waiter.future.isDone()) {
                        return;
                    }
                    if (!waiter.deadline.hasPassed()) {
                        armDeadline(waiter); // a ticker that moves slower than real time
                        return;
                    }
                    withdraw(waiter);
                    waiter.future.complete(Optional.empty());
                },
                Math.max(0, left),
                TimeUnit.NANOSECONDS);
    }

    /** While waiters queue behind a holder, checks again when the holder's lease would run out unreleased. */
    private void armExpiry(Name key, KeyState state) {
        if (state.holders.isEmpty() || state.queue.isEmpty()) {
            return;
        }
        if (state.expiryCheck != null && !state.expiryCheck.isDone()) {
            return;
        }
        long left = state.holders.stream()
                .mapToLong(h -> Math.max(TimeUnit.MILLISECONDS.toNanos(1), h.entryEndsNanos() - h.now()))
                .min()
                .orElseThrow();
        state.expiryCheck = TIMER.schedule(
                () -> {
                    List<Handover> handovers = new ArrayList<>();
                    mutex.lock();
                    try {
                        KeyState current = keys.get(key);
                        if (current != state) {
                            return;
                        }
                        state.expiryCheck = null;
                        expire(state, handovers);
                        armExpiry(key, state);
                        forgetIfIdle(key);
                    } finally {
                        mutex.unlock();
                    }
                    handOver(handovers);
                },
                left,
                TimeUnit.NANOSECONDS);
    }

    private void forgetIfIdle(Name key) {
        KeyState state = keys.get(key);
        if (state != null && state.holders.isEmpty() && state.queue.isEmpty()) {
            if (state.expiryCheck != null) {
                state.expiryCheck.cancel(false);
            }
            keys.remove(key);
        }
    }

    private static ScheduledExecutorService timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-memory-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    @Override
    public String toString() {
        return "LockSpace[" + name + "]";
    }
}
