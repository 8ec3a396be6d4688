package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.DurationText;
import io.etcd.jetcd.Txn;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.TxnResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of one key, driven by etcd's answers and watch events: no thread waits while it waits (the blocking
 * {@code acquire} is this future awaited). It ends exactly once, by a grant, by giving up at the deadline, by a
 * failure, or by cancellation; every end but the grant deletes the attempt's key before (or, for a cancellation,
 * right after) the future completes. A grant that loses the race against a cancellation is released.
 */
abstract class EtcdAcquisition {

    private static final Logger log = LoggerFactory.getLogger(EtcdAcquisition.class);

    /**
     * What every acquisition of one backend is given by it.
     *
     * @param calls every request to etcd goes through here
     * @param sessions the backend's sessions, on whose leases the lock keys are put
     * @param outages ends waits parked on a watch when etcd stops answering
     * @param operationTimeout the bound of one request
     * @param resolveTimeout how long after sending a write whose answer is late an attempt waits for etcd's real answer
     *     before it ends (the connect timeout: how long the locker waits for the store at all)
     * @param releaseUnwanted releases, in the background, a grant nobody can receive any more
     */
    record Shared(
            EtcdCalls calls,
            Sessions sessions,
            OutageWatch outages,
            Duration operationTimeout,
            Duration resolveTimeout,
            Consumer<EtcdLease> releaseUnwanted) {}

    final EtcdCalls calls;
    final Sessions sessions;
    /** The bound of one request, and what a granted lease's own requests are bounded by. */
    final Duration operationTimeout;

    final LockRequest request;
    final Deadline deadline;
    final boolean tryOnce;
    final CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
    /** Completes once nothing of this attempt is left in the store (or its removal is handed to the session). */
    final CompletableFuture<Void> cleaned = new CompletableFuture<>();

    private final OutageWatch outages;
    private final Duration resolveTimeout;
    private final Consumer<EtcdLease> releaseUnwanted;
    private boolean finished; // guarded by this
    private Watch.Watcher watcher; // guarded by this
    /** The last write that may have put a key of this attempt (null: none); the clean-up deletes after its answer. */
    private EtcdCalls.Write<?> lastWrite; // guarded by this
    /** The request of this attempt sent last (null: none yet); the deadline waits for its answer. */
    private CompletableFuture<?> lastRequest; // guarded by this

    EtcdAcquisition(Shared shared, LockRequest request, Deadline deadline, boolean tryOnce) {
        this.calls = shared.calls();
        this.sessions = shared.sessions();
        this.operationTimeout = shared.operationTimeout();
        this.outages = shared.outages();
        this.resolveTimeout = shared.resolveTimeout();
        this.releaseUnwanted = shared.releaseUnwanted();
        this.request = request;
        this.deadline = deadline;
        this.tryOnce = tryOnce;
    }

    /** Starts the attempt; the future completes as described in {@link io.distlock.spi.LockBackend#acquireAsync}. */
    final CompletableFuture<Optional<Lease>> start() {
        result.whenComplete((lease, failure) -> {
            if (result.isCancelled() && finish()) {
                stopWatching();
                cleanUp().whenComplete((v, e) -> cleaned.complete(null));
            }
        });
        if (!tryOnce && deadline.isBounded()) {
            scheduleDeadline();
        }
        try {
            begin();
        } catch (RuntimeException e) {
            fail(e);
        }
        return result;
    }

    /** Sends the first request. */
    abstract void begin();

    /**
     * Deletes whatever this attempt may have put, once etcd has really answered its last write (see {@link
     * #sendWrite}); completes when done or handed over, with whether a write still in flight when the attempt ended
     * got etcd's answer meanwhile. A write that timed out may still be applied: a delete sent before its answer could
     * be applied first, and the write would then leave its key, bound to a lease kept alive, for good. So the clean-up
     * waits for that answer, at most {@link Shared#resolveTimeout()} after the write was sent; past that it
     * deletes now and once more when the answer comes (or the session ends, taking the key with it). While etcd cannot
     * be reached, the delete is handed to the session at once (it repeats it with its keep-alives): waiting for it
     * here would only hold the caller.
     */
    final CompletableFuture<Boolean> cleanUp() {
        EtcdCalls.Write<?> write;
        synchronized (this) {
            write = lastWrite;
        }
        if (write == null) {
            return removeKey(cleanUpDeadline()).thenApply(v -> false);
        }
        CompletableFuture<Void> settled = write.settled();
        if (settled.isDone()) {
            boolean unreachable = write.result().isCompletedExceptionally() && !write.anySendAnswered();
            return removeKey(unreachable ? Deadline.after(Duration.ZERO, calls.ticker()) : cleanUpDeadline())
                    .thenApply(v -> false);
        }
        long left =
                write.sentNanos() + resolveTimeout.toNanos() - calls.ticker().read();
        return settled.copy()
                .orTimeout(Math.max(1, left), TimeUnit.NANOSECONDS)
                .handle((v, unsettled) -> unsettled == null && write.anySendAnswered())
                .thenCompose(answered -> {
                    if (answered) {
                        return removeKey(cleanUpDeadline()).thenApply(v -> true);
                    }
                    log.warn(
                            "A write of lock '{}' got no answer from etcd within {} of its sending; its key is deleted"
                                    + " in the background, again once etcd answers it",
                            request.key(),
                            DurationText.of(resolveTimeout));
                    settled.thenRun(() -> removeKey(cleanUpDeadline()));
                    return removeKey(Deadline.after(Duration.ZERO, calls.ticker()))
                            .thenApply(v -> false);
                });
    }

    /** The deadline of a clean-up's request: the operation timeout from now. */
    final Deadline cleanUpDeadline() {
        return Deadline.after(operationTimeout, calls.ticker());
    }

    /**
     * Deletes the key this attempt may have put (every write of it answered) within {@code deadline}, else hands the
     * delete to the session; completes when done or handed over.
     */
    abstract CompletableFuture<Void> removeKey(Deadline deadline);

    /** The deadline of one request: the operation timeout, and never past the attempt's deadline. */
    final Deadline requestDeadline() {
        Deadline op = Deadline.after(operationTimeout, calls.ticker());
        return deadline.remainingNanos() < op.remainingNanos() ? deadline : op;
    }

    final synchronized boolean isFinished() {
        return finished;
    }

    /** Claims the end of the attempt; true for the one caller that may end it. */
    private synchronized boolean finish() {
        if (finished) {
            return false;
        }
        finished = true;
        return true;
    }

    /** Ends the attempt with a grant; a grant that arrives after the end is left to the clean-up. */
    final void grant(EtcdLease lease) {
        if (!finish()) {
            return;
        }
        stopWatching();
        cleaned.complete(null);
        if (!lease.session().adopt(lease)) {
            lease.lose(calls.ticker().read(), "the etcd session was lost while the lock was being granted");
        }
        if (!result.complete(Optional.of(lease))) {
            releaseUnwanted.accept(lease); // cancelled meanwhile: the grant is nobody's
        }
    }

    /** Ends the attempt without the lock (deadline passed, or tryLock found it held). */
    final void giveUp() {
        if (!finish()) {
            return;
        }
        stopWatching();
        cleanUp().whenComplete((v, e) -> {
            cleaned.complete(null);
            result.complete(Optional.empty());
        });
    }

    /** Ends the attempt with a failure, after cleaning up. */
    final void fail(Throwable failure) {
        if (!finish()) {
            return;
        }
        stopWatching();
        Throwable cause = EtcdCalls.unwrap(failure);
        RuntimeException error = cause instanceof LockBackendException || cause instanceof LockConfigurationException
                ? (RuntimeException) cause
                : new LockBackendException(
                        "etcd at " + calls.endpoints() + " failed while taking lock '" + request.key() + "': " + cause,
                        cause);
        boolean timedOut = EtcdCalls.isTimeout(cause);
        cleanUp().whenComplete((answeredLate, e) -> {
            cleaned.complete(null);
            if (timedOut && Boolean.TRUE.equals(answeredLate) && (tryOnce || deadline.hasPassed())) {
                // etcd did answer, only after the attempt's time: the lock was not taken in time, and is not kept
                result.complete(Optional.empty());
                return;
            }
            result.completeExceptionally(error);
        });
    }

    /** Whether a failure may be retried within the deadline by starting over (our key vanished, lease not found). */
    final boolean canStartOver() {
        return !tryOnce && !deadline.hasPassed() && !isFinished();
    }

    /**
     * Waits for the deletion of {@code key}, read with {@code createRevision} at store revision {@code readAt} (see
     * {@link DeletionWatch}: a watch etcd delivers at once, with no deletion missed), and calls {@code onDeleted} once,
     * on its deletion or on a failure of the watch or of its check (the caller reads the state again either way).
     */
    final void watchForDeletion(String key, long createRevision, long readAt, Runnable onDeleted) {
        park(
                (once, ended) -> DeletionWatch.start(
                        calls, key, createRevision, readAt, this::requestDeadline, once, null, ended),
                key,
                onDeleted);
    }

    /**
     * Waits for the deletion of any of the {@code count} keys in {@code ahead}'s range created up to its revision, read
     * at store revision {@code readAt} (see {@link DeletionWatch#startRange}); otherwise as {@link #watchForDeletion},
     * {@code onDeleted} getting the key whose deletion was seen (null: unknown, the watch found it gone or ended).
     */
    final void watchForDeletionAhead(FairQueue.Count ahead, long readAt, Consumer<String> onDeleted) {
        AtomicReference<String> deleted = new AtomicReference<>();
        park(
                (once, ended) -> DeletionWatch.startRange(
                        calls,
                        ahead.dir(),
                        ahead.rangeEnd(),
                        ahead.maxCreateRevision(),
                        ahead.count(),
                        readAt,
                        this::requestDeadline,
                        deleted::set,
                        once,
                        ended),
                ahead.dir(),
                () -> onDeleted.accept(deleted.get()));
    }

    /**
     * Waits near the head of a queue for the deletion of every key {@code ahead} holds, read at store revision {@code
     * readAt}, before that of the attempt's own key {@code ownKey} (see {@link DeletionWatch#startNearHead}): calls
     * {@code onGranted} with the store revision at which the attempt was first, or {@code onLookAgain} once, when its
     * own key went first or the watch or its check failed (the caller reads the queue again).
     */
    final void watchNearHead(
            FairQueue.NearHead ahead,
            String ownKey,
            long ownRevision,
            long readAt,
            LongConsumer onGranted,
            Runnable onLookAgain) {
        AtomicLong grantedAt = new AtomicLong();
        park(
                (once, ended) -> DeletionWatch.startNearHead(
                        calls,
                        ahead.dir(),
                        ahead.rangeEnd(),
                        ahead.keys(),
                        ownKey,
                        ownRevision,
                        readAt,
                        this::requestDeadline,
                        at -> {
                            grantedAt.set(at);
                            once.run();
                        },
                        once,
                        ended),
                ahead.dir(),
                () -> {
                    long at = grantedAt.get();
                    if (at > 0) {
                        onGranted.accept(at);
                    } else {
                        onLookAgain.run();
                    }
                });
    }

    private void park(
            BiFunction<Runnable, Consumer<Throwable>, Watch.Watcher> watch, String watched, Runnable onDeleted) {
        AtomicBoolean fired = new AtomicBoolean();
        Runnable once = () -> {
            if (fired.compareAndSet(false, true)) {
                stopWatching();
                if (!isFinished()) {
                    onDeleted.run();
                }
            }
        };
        Watch.Watcher w = watch.apply(once, error -> {
            log.debug("Watch of {} for lock '{}' ended: {}", watched, request.key(), error.toString());
            once.run();
        });
        boolean close;
        synchronized (this) {
            close = finished || fired.get();
            if (!close) {
                watcher = w;
            }
        }
        if (close) {
            w.close();
        } else {
            outages.parked(this);
        }
    }

    /** etcd has not answered for the outage limit while this attempt waited on a watch (see {@link OutageWatch}). */
    final void storeUnreachable(LockBackendException outage) {
        fail(outage);
    }

    private void stopWatching() {
        outages.resumed(this);
        Watch.Watcher w;
        synchronized (this) {
            w = watcher;
            watcher = null;
        }
        if (w != null) {
            try {
                w.close();
            } catch (RuntimeException e) {
                log.debug("Closing a watch failed: {}", e.toString());
            }
        }
    }

    private void scheduleDeadline() {
        long left = deadline.remainingNanos();
        if (left <= 0) {
            calls.timer().execute(this::giveUp);
            return;
        }
        calls.timer()
                .schedule(
                        () -> {
                            if (isFinished()) {
                                return;
                            }
                            if (!deadline.hasPassed()) {
                                scheduleDeadline();
                                return;
                            }
                            CompletableFuture<?> pending;
                            synchronized (this) {
                                pending = lastRequest;
                            }
                            if (pending != null) {
                                // Its answer decides: a failure of the store (not a lock held too long) fails the
                                // attempt; the request's own deadline is this one, so that is now. Asked even when
                                // the request is already done: it may have just failed (its timeout fires with this
                                // one) with its own continuation not yet run, and a give-up here would turn a store
                                // that does not answer into a lock that is "not granted in time". Both end the
                                // attempt alike.
                                pending.whenComplete((r, e) -> {
                                    if (e != null) {
                                        fail(e);
                                    } else {
                                        giveUp();
                                    }
                                });
                                return;
                            }
                            giveUp();
                        },
                        left,
                        TimeUnit.NANOSECONDS);
    }

    /**
     * Sends a write that may leave a key of this attempt in the store ({@code send} also marks that it may), unless the
     * attempt has ended: then nothing is sent and the result is empty. The check, the mark and the send happen under
     * the attempt's monitor, which {@link #finish} takes too, so a clean-up either sees the write and waits for its
     * answer, or the write is never sent. Waiting matters on a cluster: a delete sent while the put is in flight may
     * reach another member and be applied first, and the put would then leave its key behind.
     */
    final synchronized <T> Optional<CompletableFuture<T>> sendWrite(Supplier<EtcdCalls.Write<T>> send) {
        if (finished) {
            return Optional.empty();
        }
        EtcdCalls.Write<T> write = send.get();
        lastWrite = write;
        lastRequest = write.result();
        return Optional.of(write.result());
    }

    /** Records {@code request} (e.g. finding or granting a session) as the one the deadline waits for. */
    final synchronized <T> CompletableFuture<T> tracked(CompletableFuture<T> request) {
        lastRequest = request;
        return request;
    }

    /** Sends a transaction that only reads (or writes nothing of this attempt's), bounded by {@link #requestDeadline}. */
    final CompletableFuture<TxnResponse> sendRead(String what, UnaryOperator<Txn> body) {
        CompletableFuture<TxnResponse> read = calls.txn(what, body, requestDeadline());
        synchronized (this) {
            lastRequest = read;
        }
        return read;
    }

    /**
     * Takes the answer of a compare-and-set sent with {@code s}'s lease: {@code onAnswer} with the response; a lease
     * etcd no longer knows loses the session and starts over (once, {@link #canStartOver()}); any other failure fails
     * the attempt.
     */
    final void whenAnswered(EtcdSession s, CompletableFuture<TxnResponse> write, Consumer<TxnResponse> onAnswer) {
        write.whenComplete((response, failure) -> {
            if (failure != null) {
                Throwable cause = EtcdCalls.unwrap(failure);
                if (EtcdCalls.isNotFound(cause) && canStartOver()) {
                    s.lose("etcd no longer knows its lease " + s.hexId());
                    begin();
                    return;
                }
                fail(cause);
                return;
            }
            guarded(() -> onAnswer.accept(response));
        });
    }

    /** Runs {@code step} unless the attempt has ended; a failure of the step fails the attempt. */
    final void guarded(Runnable step) {
        if (isFinished()) {
            return;
        }
        try {
            step.run();
        } catch (RuntimeException e) {
            fail(e);
        }
    }
}
