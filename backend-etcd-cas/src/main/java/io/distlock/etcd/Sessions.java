package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The backend's sessions (etcd leases kept alive): usually one, like etcd's {@code concurrency.Session}, granted when
 * the backend opens. Another is granted only when an acquisition needs one: in fair mode a session queues for a name
 * once at a time (its key is {@code <name>/<lease id>}), so a second thread of the same locker waiting for the same
 * name gets a second session; and a lost session is replaced. An extra session is revoked as soon as nothing of it
 * is left (its last claim given back), so K waiters of one name leave one lease, not K leases and K keep-alives; one
 * granted for an acquisition that takes any session, when another was granted first, at once ({@link #any}).
 */
final class Sessions {

    private final EtcdCalls calls;
    private final long ttlSeconds;
    /** The lock-delay in whole seconds: each lease is granted for {@code ttlSeconds} plus this (see {@link EtcdSession}). */
    private final long delaySeconds;

    private final Duration operationTimeout;
    private final List<EtcdSession> live = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    Sessions(EtcdCalls calls, long ttlSeconds, long delaySeconds, Duration operationTimeout) {
        this.calls = calls;
        this.ttlSeconds = ttlSeconds;
        this.delaySeconds = delaySeconds;
        this.operationTimeout = operationTimeout;
    }

    long ttlSeconds() {
        return ttlSeconds;
    }

    /** The oldest usable session, granting one if there is none (see {@link #oldestOnceGranted}). */
    CompletableFuture<EtcdSession> any(Deadline deadline) {
        EtcdSession usable = oldestUsable();
        return usable != null
                ? CompletableFuture.completedFuture(usable)
                : grant(deadline).thenApply(this::oldestOnceGranted);
    }

    /** The first usable session in the order they were granted, or null. */
    private EtcdSession oldestUsable() {
        for (EtcdSession s : live) {
            if (s.isUsable()) {
                return s;
            }
        }
        return null;
    }

    /**
     * The oldest usable session once {@code granted} has joined the live ones. Acquisitions that come together when
     * no session is usable (the locker's session just lost) each grant one; the first granted serves them all, and the
     * others are revoked at once. Nothing else has them: this method hands out the oldest usable session only, and a
     * session claimed for a name in the meantime is not retired ({@link EtcdSession#retireIfIdle}). Before, in cas
     * mode, where nothing is claimed and so no session is ever retired, every one of them was kept alive for the
     * locker's life.
     */
    private EtcdSession oldestOnceGranted(EtcdSession granted) {
        EtcdSession oldest = oldestUsable();
        if (oldest == null || oldest == granted) {
            return granted;
        }
        retireIfSpare(granted); // an older session is usable: this one is not the locker's own
        return oldest;
    }

    /**
     * A live session that has claimed {@code name} for the attempt of {@code ownerId}, granting a new one if every one
     * has it.
     */
    CompletableFuture<EtcdSession> claim(String name, String ownerId, Deadline deadline) {
        for (EtcdSession s : live) {
            if (s.claim(name, ownerId)) {
                return CompletableFuture.completedFuture(s);
            }
        }
        return grant(deadline)
                .thenCompose(s ->
                        s.claim(name, ownerId) ? CompletableFuture.completedFuture(s) : claim(name, ownerId, deadline));
    }

    /** Grants a new session and starts keeping it alive. */
    CompletableFuture<EtcdSession> grant(Deadline deadline) {
        if (closed) {
            return CompletableFuture.failedFuture(new LockBackendException("The etcd backend is closed"));
        }
        long sent = calls.ticker().read();
        return calls.grant(ttlSeconds + delaySeconds, deadline).thenApply(response -> {
            EtcdSession[] self = new EtcdSession[1];
            EtcdSession session = new EtcdSession(
                    calls,
                    response.getID(),
                    response.getTTL(),
                    delaySeconds,
                    sent,
                    () -> live.remove(self[0]),
                    this::retireIfSpare);
            self[0] = session;
            live.add(session);
            session.start();
            // The first keep-alive goes out now: it opens jetcd's lease stream before a lock depends on it.
            session.keepAliveNow(deadline);
            if (closed) {
                live.remove(session);
                session.close(Deadline.after(operationTimeout, calls.ticker()));
                throw new LockBackendException("The etcd backend is closed");
            }
            return session;
        });
    }

    /** Revokes {@code session} if it is idle and not the oldest live one (which stays, as the locker's own). */
    private void retireIfSpare(EtcdSession session) {
        Iterator<EtcdSession> oldest = live.iterator();
        if (!oldest.hasNext() || oldest.next() == session || !session.retireIfIdle()) {
            return;
        }
        live.remove(session);
        session.close(Deadline.after(operationTimeout, calls.ticker()));
    }

    /** Revokes every session (their keys go with them), waiting at most the operation timeout. */
    void close() {
        closed = true;
        Deadline deadline = Deadline.after(operationTimeout, calls.ticker());
        CompletableFuture<?>[] revokes =
                live.stream().map(s -> s.close(deadline)).toArray(CompletableFuture[]::new);
        live.clear();
        try {
            CompletableFuture.allOf(revokes).get(Math.max(1, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // each revoke logs its own failure; the leases expire by themselves
        }
    }
}
