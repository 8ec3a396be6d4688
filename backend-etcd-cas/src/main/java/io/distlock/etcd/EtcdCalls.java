package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.RequestTimeouts;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Response;
import io.etcd.jetcd.Txn;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every request the backend sends to etcd goes through here: counted (one per round trip, for {@code
 * storeRequests()}), bounded by a deadline, and repeated after a failure that may have lost the reply
 * ({@code UNAVAILABLE}: connection lost, leader changed, no leader). Seed 001: a versioned compare-and-set can be
 * sent again until a real answer comes; the callers make each repeated request recognise its own earlier effect (the
 * owner id in the value, our own key's create revision in the compare).
 *
 * <p>A request that may write is also sent again, at once, when an answer shows that etcd's leader changed (a higher
 * raft term in its header) since the request went out unanswered: a member forwards a write to the leader, and a write
 * forwarded to a leader that died or froze is lost without a word, the member answering "request timed out" only after
 * etcd's request timeout (5 s plus two election timeouts). Sent again in the new term, it is answered within a round
 * trip of the first answer the new leader lets through (a lease keep-alive, every third of the TTL, if nothing else).
 * The repeat is the one a lost reply would have brought later, and each request recognises its own earlier effect as
 * it does then; whichever send is answered first gives the result.
 */
final class EtcdCalls {

    private static final Logger log = LoggerFactory.getLogger(EtcdCalls.class);
    private static final long RETRY_PAUSE_MILLIS = 50;
    /**
     * The longest pause between repeats of a lease's grant or revoke, which double from {@link #RETRY_PAUSE_MILLIS}:
     * jetcd logs two WARN lines for every failed lease call (its retry policy's, though it retries none), so a grant
     * repeated every 50 ms through an outage printed 40 lines a second.
     */
    private static final long LEASE_RETRY_MAX_PAUSE_MILLIS = 500;
    /**
     * How many times one request is sent again at once after etcd refused its stale password token
     * ({@link EtcdFailures#isStaleToken}): the new token jetcd asks for then may be refused too (a member restarted
     * meanwhile), but a request is not repeated for ever.
     */
    private static final int MAX_STALE_TOKEN_REPEATS = 2;

    private final Client client;
    private final String endpoints;
    private final Ticker ticker;
    private final ScheduledExecutorService timer;
    private final LongAdder requests = new LongAdder();
    /** Every send's deadline, with one timer armed at a time rather than one per request. */
    private final RequestTimeouts timeouts = new RequestTimeouts();
    /** The watches opened and not yet seen closed: closed with the backend, as the client may be the application's. */
    private final Set<Watch.Watcher> watchers = ConcurrentHashMap.newKeySet();
    /** The requests waiting for the timer to send them again, each with what fails it if the backend closes first. */
    private final Map<Write<?>, Runnable> awaitingRepeat = new ConcurrentHashMap<>();
    /** Set as the backend closes ({@link #endRepeats()}): a failed request is not sent again from then on. */
    private volatile boolean closed;
    /** When etcd last answered a request (a ticker reading): how long it has been silent, for {@link OutageWatch}. */
    private volatile long lastAnswerNanos;
    /** The highest raft term in the header of any answer so far; 0 before the first. */
    private final AtomicLong term = new AtomicLong();
    /** The writes whose latest send is unanswered, each with the term it went out in and what sends it again. */
    private final Map<Write<?>, Unanswered> unanswered = new ConcurrentHashMap<>();

    EtcdCalls(Client client, String endpoints, Ticker ticker, ScheduledExecutorService timer) {
        this.client = client;
        this.endpoints = endpoints;
        this.ticker = ticker;
        this.timer = timer;
        this.lastAnswerNanos = ticker.read();
    }

    /** The ticker reading when etcd last answered a request of this backend. */
    long lastAnswerNanos() {
        return lastAnswerNanos;
    }

    private void answered(Object answer) {
        lastAnswerNanos = ticker.read();
        if (answer instanceof Response response) {
            newTerm(response.getHeader().getRaftTerm());
        }
    }

    /**
     * Notes an answer's raft term; if it is higher than every term seen before (and one was seen: the first answers
     * tell nothing), sends again every write whose latest send went out in an earlier term and is still unanswered;
     * not once the backend closes, when a repeat is sent no more ({@link #endRepeats()}).
     */
    private void newTerm(long answerTerm) {
        long before = term.getAndAccumulate(answerTerm, Math::max);
        if (before == 0 || answerTerm <= before || closed) {
            return;
        }
        for (Map.Entry<Write<?>, Unanswered> e : unanswered.entrySet()) {
            Unanswered pending = e.getValue();
            if (pending.term() < answerTerm && unanswered.remove(e.getKey(), pending)) {
                log.debug(
                        "{}: unanswered since raft term {}, sending it again in term {}",
                        pending.what(),
                        pending.term(),
                        answerTerm);
                pending.again().run();
            }
        }
    }

    /** A write's latest send, unanswered: the raft term it went out in, and what sends the write again. */
    private record Unanswered(String what, long term, Runnable again) {}

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String text(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    Ticker ticker() {
        return ticker;
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    String endpoints() {
        return endpoints;
    }

    long requests() {
        return requests.sum();
    }

    /** A transaction, repeated after a lost reply until {@code deadline}. */
    CompletableFuture<TxnResponse> txn(String what, UnaryOperator<Txn> body, Deadline deadline) {
        return write(what, body, deadline).result();
    }

    /**
     * A transaction that may write, repeated after a lost reply until {@code deadline}; its {@link Write#settled()}
     * tells when etcd has really answered every send of it, which may be after the result timed out.
     */
    Write<TxnResponse> write(String what, UnaryOperator<Txn> body, Deadline deadline) {
        return send(what, () -> body.apply(client.getKVClient().txn()).commit(), deadline);
    }

    /**
     * Any request that may write, sent by {@code call} (asked again for each repeat, so a repeat may differ from the
     * first send) and repeated after a lost reply until {@code deadline}.
     */
    <T> Write<T> send(String what, Supplier<CompletableFuture<T>> call, Deadline deadline) {
        return send(what, call, deadline, failure -> false, RETRY_PAUSE_MILLIS);
    }

    /**
     * The same, not repeated after a failure that {@code hopeless} says a repeat cannot mend, and repeated after pauses
     * that double from {@link #RETRY_PAUSE_MILLIS} up to {@code maxPauseMillis}.
     */
    private <T> Write<T> send(
            String what,
            Supplier<CompletableFuture<T>> call,
            Deadline deadline,
            Predicate<Throwable> hopeless,
            long maxPauseMillis) {
        Write<T> write = new Write<>(new CompletableFuture<>(), ticker.read(), hopeless, maxPauseMillis);
        attempt(what, call, deadline, write, 1);
        return write;
    }

    /** The KV client, for a request the caller builds itself (sent through {@link #send}). */
    KV kv() {
        return client.getKVClient();
    }

    /**
     * One request as the caller sees it ({@link #result()}: bounded by its deadline) and as etcd sees it: every send
     * of it, the repeats included, whose real answers may come after the result has timed out. A write whose result
     * timed out may still be applied later; only once {@link #settled()} is it known that no send is left in flight.
     */
    static final class Write<T> {
        private final CompletableFuture<T> result;
        private final long sentNanos;
        private final List<CompletableFuture<?>> sends = new CopyOnWriteArrayList<>();
        private final Predicate<Throwable> hopeless;
        private final long maxPauseMillis;
        /** Sends repeated at once because etcd refused a stale token ({@link #MAX_STALE_TOKEN_REPEATS} at most). */
        private volatile int staleTokenRepeats;
        /** The number of the latest send (1 for the first): only its failure decides what comes next. */
        private volatile int latestSend;

        Write(CompletableFuture<T> result, long sentNanos, Predicate<Throwable> hopeless, long maxPauseMillis) {
            this.result = result;
            this.sentNanos = sentNanos;
            this.hopeless = hopeless;
            this.maxPauseMillis = maxPauseMillis;
        }

        /** The pause before the repeat that follows send {@code n} (1 for the first). */
        private long pauseMillisAfter(int n) {
            return Math.min(RETRY_PAUSE_MILLIS << Math.min(n - 1, 20), maxPauseMillis);
        }

        CompletableFuture<T> result() {
            return result;
        }

        /** The ticker reading when the first send went out. */
        long sentNanos() {
            return sentNanos;
        }

        /**
         * Whether etcd answered any send of this write: a reply, or an error etcd sent (a refusal such as a full
         * database), not a failure of the connection or a timeout.
         */
        boolean anySendAnswered() {
            return sends.stream()
                    .anyMatch(f -> f.isDone()
                            && (!f.isCompletedExceptionally()
                                    || isEtcdsError(f.handle((v, e) -> e).join())));
        }

        private boolean allSendsDone() {
            for (CompletableFuture<?> send : sends) {
                if (!send.isDone()) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Completes, normally, once the result is known and every send has had etcd's answer or failed on its
         * connection: after that, nothing of this write can still be applied.
         */
        CompletableFuture<Void> settled() {
            if (result.isDone() && allSendsDone()) {
                return CompletableFuture.completedFuture(null); // the common case, asked as the result is known
            }
            return result.handle((r, e) -> null)
                    .thenCompose(done -> CompletableFuture.allOf(
                            sends.stream().map(f -> f.handle((r, e) -> null)).toArray(CompletableFuture[]::new)));
        }
    }

    /**
     * A transaction that changes nothing but needs permission to read and write {@code key}: etcd checks a
     * transaction's permissions on both branches, and this one's compare ({@code version < 0}) never holds, so its put
     * never runs. Fails with {@code PERMISSION_DENIED} if the locker's user may not write there, and without a repeat
     * after a failure that {@code hopeless} says a repeat cannot mend (a member that speaks the other protocol).
     */
    CompletableFuture<TxnResponse> checkWritable(String key, Deadline deadline, Predicate<Throwable> hopeless) {
        UnaryOperator<Txn> body = txn -> txn.If(new Cmp(bytes(key), Cmp.Op.LESS, CmpTarget.version(0)))
                .Then(Op.put(bytes(key), bytes(""), PutOption.DEFAULT));
        return send(
                        "checking permission on " + key,
                        () -> body.apply(client.getKVClient().txn()).commit(),
                        deadline,
                        hopeless,
                        RETRY_PAUSE_MILLIS)
                .result();
    }

    /** Grants a lease of {@code ttlSeconds}. */
    CompletableFuture<LeaseGrantResponse> grant(long ttlSeconds, Deadline deadline) {
        return retrying("granting a lease", () -> client.getLeaseClient().grant(ttlSeconds), deadline);
    }

    /** One keep-alive of a lease; not repeated (the next period sends another). */
    CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(long leaseId, Deadline deadline) {
        requests.increment();
        return bounded(client.getLeaseClient().keepAliveOnce(leaseId), deadline).whenComplete((response, failure) -> {
            if (failure == null) {
                answered(response);
            }
        });
    }

    /** Revokes a lease (its keys go with it). */
    CompletableFuture<?> revoke(long leaseId, Deadline deadline) {
        return retrying(
                "revoking lease " + Long.toHexString(leaseId),
                () -> client.getLeaseClient().revoke(leaseId),
                deadline);
    }

    /**
     * Watches {@code key} for deletions from now on, and for puts too if {@code puts} (a holder's own key, whose puts
     * after its grant are release requests, {@link EtcdInspection#requestRelease}), without a start revision: etcd
     * registers such a watch as synced, so its events come at once rather than from etcd's 100 ms catch-up loop for
     * watches that start in the past. The first response is the creation notice, whose header revision says from where
     * on nothing is missed.
     */
    Watch.Watcher watchFromNow(
            String key, boolean puts, Consumer<WatchResponse> onResponse, Consumer<Throwable> onError) {
        requests.increment();
        WatchOption option =
                WatchOption.builder().withNoPut(!puts).withCreateNotify(true).build();
        return track(client.getWatchClient().watch(bytes(key), option, Watch.listener(onResponse, onError)));
    }

    /**
     * Watches the keys from {@code key} to {@code rangeEnd} for deletions from now on, each event with the deleted key's
     * last state (so its create revision is known); otherwise as {@link #watchFromNow}.
     */
    Watch.Watcher watchRangeDeletesFromNow(
            String key, String rangeEnd, Consumer<WatchResponse> onResponse, Consumer<Throwable> onError) {
        requests.increment();
        WatchOption option = WatchOption.builder()
                .withRange(bytes(rangeEnd))
                .withPrevKV(true)
                .withNoPut(true)
                .withCreateNotify(true)
                .build();
        return track(client.getWatchClient().watch(bytes(key), option, Watch.listener(onResponse, onError)));
    }

    private Watch.Watcher track(Watch.Watcher watcher) {
        watchers.removeIf(Watch.Watcher::isClosed);
        watchers.add(watcher);
        return watcher;
    }

    /** Closes every watch still open (held locks' own-key watches, parked waits). */
    void closeWatches() {
        for (Watch.Watcher w : watchers) {
            w.close();
        }
        watchers.clear();
    }

    /** A lease call, repeated after a lost reply until {@code deadline}, less and less often. */
    private <T> CompletableFuture<T> retrying(String what, Supplier<CompletableFuture<T>> call, Deadline deadline) {
        return send(what, call, deadline, failure -> false, LEASE_RETRY_MAX_PAUSE_MILLIS)
                .result();
    }

    private <T> void attempt(
            String what, Supplier<CompletableFuture<T>> call, Deadline deadline, Write<T> write, int n) {
        CompletableFuture<T> result = write.result();
        if (result.isDone()) {
            return;
        }
        requests.increment();
        write.latestSend = n;
        Unanswered pending = new Unanswered(what, term.get(), () -> attempt(what, call, deadline, write, n + 1));
        unanswered.put(write, pending);
        CompletableFuture<T> sent;
        try {
            CompletableFuture<T> raw = call.get();
            write.sends.add(raw);
            // The bound applies to a copy: the send itself stays visible until etcd (or the connection) answers it.
            sent = bounded(raw.copy(), deadline);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((value, failure) -> {
            unanswered.remove(write, pending);
            if (failure == null) {
                answered(value);
                result.complete(value);
                return;
            }
            if (write.latestSend != n) {
                return; // sent again in a new term: that send's answer decides
            }
            Throwable cause = unwrap(failure);
            if (EtcdFailures.isStaleToken(cause) && write.staleTokenRepeats < MAX_STALE_TOKEN_REPEATS) {
                write.staleTokenRepeats++;
                log.debug(
                        "{}: etcd refused a stale token, sending it again with a new one: {}", what, cause.toString());
                attempt(what, call, deadline, write, n + 1);
                return;
            }
            long pause = write.pauseMillisAfter(n);
            if (mayHaveLostReply(cause)
                    && !write.hopeless.test(cause)
                    && deadline.remainingNanos() > TimeUnit.MILLISECONDS.toNanos(pause)) {
                log.debug("{} failed (attempt {}), sending it again: {}", what, n, cause.toString());
                repeatLater(what, call, deadline, write, n, pause, cause);
                return;
            }
            result.completeExceptionally(failure(what, cause, deadline));
        });
    }

    /**
     * Sends the request again after {@code pauseMillis}, unless the backend closes first: then {@link #endRepeats()}
     * (or a timer that refuses the repeat) fails it at once, as nothing is left to send it.
     */
    private <T> void repeatLater(
            String what,
            Supplier<CompletableFuture<T>> call,
            Deadline deadline,
            Write<T> write,
            int n,
            long pauseMillis,
            Throwable cause) {
        Runnable notSent = () -> write.result()
                .completeExceptionally(new LockBackendException(
                        "etcd at " + endpoints + " failed " + what + ", and it was not sent again: the locker was"
                                + " closed (" + cause + ")",
                        cause));
        awaitingRepeat.put(write, notSent);
        if (closed) {
            awaitingRepeat.remove(write);
            notSent.run();
            return;
        }
        try {
            timer.schedule(
                    () -> {
                        awaitingRepeat.remove(write);
                        attempt(what, call, deadline, write, n + 1);
                    },
                    pauseMillis,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException timerStopped) {
            awaitingRepeat.remove(write);
            notSent.run();
        }
    }

    /**
     * Fails every request that waits to be sent again, and any that would wait from now on: the backend is closing, and
     * its timer, which would send them, stops with it. A request already sent still gets its answer.
     */
    void endRepeats() {
        closed = true;
        for (Runnable notSent : awaitingRepeat.values()) {
            notSent.run();
        }
        awaitingRepeat.clear();
    }

    private <T> CompletableFuture<T> bounded(CompletableFuture<T> future, Deadline deadline) {
        long left = deadline.remainingNanos();
        return left == Long.MAX_VALUE ? future : timeouts.bound(future, Duration.ofNanos(Math.max(1, left)));
    }

    /** Whether the failure says nothing about whether the request was applied, so sending it again is the way on. */
    static boolean mayHaveLostReply(Throwable e) {
        if (EtcdFailures.isRefusal(e)) {
            return false; // a handshake or a credential refused: a repeat gets the same answer
        }
        Status.Code code = statusCode(e);
        return code == Status.Code.UNAVAILABLE || code == Status.Code.UNKNOWN && isConnectionClosed(e);
    }

    /**
     * Whether the failure is an error etcd itself answered (the request was refused, not lost): a gRPC status other
     * than those of a connection lost, a deadline or a cancel.
     */
    static boolean isEtcdsError(Throwable e) {
        Status.Code code = statusCode(e);
        return code != null
                && code != Status.Code.UNAVAILABLE
                && code != Status.Code.DEADLINE_EXCEEDED
                && code != Status.Code.CANCELLED
                && code != Status.Code.UNKNOWN;
    }

    /** Whether the failure says that the lease (or key) asked about does not exist. */
    static boolean isNotFound(Throwable e) {
        Status.Code code = statusCode(e);
        return code == Status.Code.NOT_FOUND
                || (e.getMessage() != null && e.getMessage().contains("lease not found"));
    }

    private static boolean isConnectionClosed(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.IOException || t instanceof java.nio.channels.ClosedChannelException) {
                return true;
            }
        }
        return false;
    }

    /** The gRPC status code in {@code e}'s causes, or {@code null}. */
    static Status.Code statusCode(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof StatusRuntimeException s) {
                return s.getStatus().getCode();
            }
            if (t instanceof StatusException s) {
                return s.getStatus().getCode();
            }
            if (t instanceof EtcdException etcd) {
                return Status.Code.valueOf(etcd.getErrorCode().name());
            }
        }
        return null;
    }

    /** Whether the failure is a request that got no answer by its deadline (it may still be applied later). */
    static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException) {
                return true;
            }
        }
        return false;
    }

    static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private LockBackendException failure(String what, Throwable cause, Deadline deadline) {
        if (cause instanceof LockBackendException e) {
            return e;
        }
        if (cause instanceof TimeoutException) {
            return new LockBackendException(
                    "No answer from etcd at " + endpoints + " within "
                            + deadline.maxWait().map(DurationText::of).orElse("the deadline") + " " + what
                            + " (option operationTimeout)",
                    cause);
        }
        if (EtcdFailures.isOutOfSpace(cause)) {
            return new LockBackendException(
                    "etcd at " + endpoints + " refused " + what + ": " + EtcdFailures.OUT_OF_SPACE, cause);
        }
        return new LockBackendException("etcd at " + endpoints + " failed " + what + ": " + cause, cause);
    }
}
