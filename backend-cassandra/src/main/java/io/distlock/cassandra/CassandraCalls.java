package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.connection.ClosedConnectionException;
import com.datastax.oss.driver.api.core.connection.HeartbeatException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.servererrors.QueryConsistencyException;
import com.datastax.oss.driver.api.core.servererrors.ReadTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.UnauthorizedException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import io.distlock.LockBackendException;
import io.distlock.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the backend's statements on one driver session: each execution counts as one store request, and every driver
 * failure becomes a {@link LockBackendException} naming the cluster and what was being done.
 *
 * <p>A statement marked idempotent is sent again, within the operation timeout, after a replica timeout or a
 * connection lost with the request in flight ({@link #mayResend}): what a node that dies mid-request causes until its
 * peers have noticed. The driver's default retry policy sends a write again after a write timeout only for a logged
 * batch, so a release or a claim would otherwise fail on it. The lease renewal's rewrite, which must never be sent
 * once its lease is released, is sent again only through its fence ({@link #rewrite}).
 */
final class CassandraCalls {

    private static final Logger LOG = LoggerFactory.getLogger(CassandraCalls.class);

    /**
     * How many times a statement is sent again after a failure {@link #mayResend} allows, within the operation timeout
     * of its first send. A dead node's peers stop waiting for it once they have convicted it (seconds): a later send
     * then reaches the live replicas.
     */
    static final int RESENDS = 2;

    private final CqlSession session;
    private final String where;
    private final Duration timeout;
    private final Ticker ticker;
    private final LongAdder requests = new LongAdder();
    private volatile List<ExecutionInfo> traced; // null: no tracing
    private final AtomicReference<String> failNext = new AtomicReference<>(); // tests: a request to fail once
    private final AtomicReference<String> replicaTimeoutNext = new AtomicReference<>(); // tests: an answer to replace
    private volatile Runnable beforeRewriteResend = () -> {}; // tests: runs before a rewrite is sent again

    CassandraCalls(CqlSession session, String where, Duration timeout, Ticker ticker) {
        this.session = session;
        this.where = where;
        this.timeout = timeout;
        this.ticker = ticker;
    }

    /** Runs one statement and waits for its answer (at most the operation timeout): {@link #send}, joined. */
    <S extends Statement<S>> AsyncResultSet execute(S statement, String what) {
        return join(send(statement, what));
    }

    /**
     * Sends one statement without waiting; the stage completes on a driver thread, and fails with a {@link
     * LockBackendException} naming the cluster and what was being done. An idempotent statement is sent again after a
     * failure {@link #mayResend} allows, at most {@link #RESENDS} times within the operation timeout.
     */
    <S extends Statement<S>> CompletionStage<AsyncResultSet> send(S statement, String what) {
        return Boolean.TRUE.equals(statement.isIdempotent())
                ? sendResending(statement, what, ticker.read(), RESENDS)
                : sendOnce(statement, what, timeout);
    }

    private <S extends Statement<S>> CompletionStage<AsyncResultSet> sendResending(
            S statement, String what, long firstSent, int resends) {
        return sendOnce(statement, what, timeLeft(firstSent)).exceptionallyCompose(error -> {
            Throwable failure = unwrapCompletion(error);
            if (resends == 0 || !mayResend(failure) || timeLeft(firstSent).isZero()) {
                return CompletableFuture.failedFuture(failure);
            }
            LOG.debug("Sending the statement {} again: {}", what, failure.toString());
            return sendResending(statement, what, firstSent, resends - 1);
        });
    }

    /** What is left of the operation timeout since {@code firstSent} (a {@link Ticker} reading), zero if none. */
    private Duration timeLeft(long firstSent) {
        long left = timeout.toNanos() - (ticker.read() - firstSent);
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /** Sends {@code statement} once, whatever its idempotence, with {@code requestTimeout}; see {@link #send}. */
    <S extends Statement<S>> CompletionStage<AsyncResultSet> sendOnce(
            S statement, String what, Duration requestTimeout) {
        requests.increment();
        String failing = failNext.get();
        if (failing != null && failing.equals(what) && failNext.compareAndSet(failing, null)) {
            return CompletableFuture.failedFuture(failure(
                    what, new DriverTimeoutException("Query timed out after " + timeout + " (injected by a test)")));
        }
        String timingOut = replicaTimeoutNext.get();
        boolean replaceAnswer =
                timingOut != null && timingOut.equals(what) && replicaTimeoutNext.compareAndSet(timingOut, null);
        List<ExecutionInfo> tracing = traced;
        CompletionStage<AsyncResultSet> sent;
        try {
            sent = session.executeAsync(statement.setTimeout(requestTimeout).setTracing(tracing != null));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(failure(what, e));
        }
        return sent.handle((result, error) -> {
            if (error != null) {
                throw failure(what, error);
            }
            if (replaceAnswer) {
                throw failure(what, injectedWriteTimeout(statement, result));
            }
            if (tracing != null) {
                tracing.add(result.getExecutionInfo());
            }
            return result;
        });
    }

    /**
     * Sends a lease's rewrite through the lease's {@code fence} ({@code send} sends it once with the request timeout it
     * is given), and after a failure {@link #mayResend} allows sends it again through the fence, at most {@link
     * #RESENDS} times, all within the operation timeout of the first send. The rewrite is marked not idempotent (see
     * {@link CassandraStatements.Cql#bindNotResent}), so the driver never sends it again by itself: every send goes
     * through the fence, so none is sent once the lease is released, and the release's deletes wait until every send
     * before them has answered (they are stamped later, and win).
     *
     * @return false if the lease was released before a send went through
     * @throws LockBackendException the last failure, when no send went through
     */
    boolean rewrite(RewriteFence fence, Function<Duration, CompletionStage<Void>> send, String what) {
        long firstSent = ticker.read();
        for (int resends = RESENDS; ; resends--) {
            Optional<CompletionStage<Void>> sent = fence.sendUnlessReleased(() -> send.apply(timeLeft(firstSent)));
            if (sent.isEmpty()) {
                return false;
            }
            try {
                join(sent.get());
                return true;
            } catch (LockBackendException e) {
                if (resends == 0 || !mayResend(e) || timeLeft(firstSent).isZero()) {
                    throw e;
                }
                LOG.debug("Sending {} again: {}", what, e.toString());
                beforeRewriteResend.run();
            }
        }
    }

    /** {@link #send}, answering the rows of a small result (its first page). */
    CompletionStage<List<Row>> sendForRows(BoundStatement statement, String what) {
        return send(statement, what).thenApply(result -> {
            List<Row> rows = new ArrayList<>(result.remaining());
            result.currentPage().forEach(rows::add);
            return rows;
        });
    }

    /**
     * Sends several statements at once (one round trip of time); the stage completes when every one has answered, so
     * none is still in flight when the caller goes on, and fails with the first failure.
     */
    CompletionStage<Void> sendAll(String what, BoundStatement... statements) {
        CompletableFuture<?>[] sent = new CompletableFuture<?>[statements.length];
        for (int i = 0; i < statements.length; i++) {
            sent[i] = send(statements[i], what).toCompletableFuture();
        }
        return allAnswered(sent);
    }

    /** {@link #sendAll}, each statement sent once ({@link #sendOnce}) with {@code requestTimeout}. */
    CompletionStage<Void> sendAllOnce(String what, Duration requestTimeout, BoundStatement... statements) {
        CompletableFuture<?>[] sent = new CompletableFuture<?>[statements.length];
        for (int i = 0; i < statements.length; i++) {
            sent[i] = sendOnce(statements[i], what, requestTimeout).toCompletableFuture();
        }
        return allAnswered(sent);
    }

    private static CompletionStage<Void> allAnswered(CompletableFuture<?>[] sent) {
        return CompletableFuture.allOf(sent).handle((v, error) -> {
            for (CompletableFuture<?> stage : sent) {
                if (stage.isCompletedExceptionally()) {
                    stage.join(); // rethrows its failure
                }
            }
            return null;
        });
    }

    /** Runs several statements at once (see {@link #sendAll}) and waits for all. */
    void executeAll(String what, BoundStatement... statements) {
        join(sendAll(what, statements));
    }

    /** The rows of a small result (one page). */
    List<Row> rows(BoundStatement statement, String what) {
        return join(sendForRows(statement, what));
    }

    /**
     * Every row of a result, page after page: each page is one request, sent as {@link #send} sends it (for the
     * look-ups and the listing of {@link Inspection}, whose results may be large).
     */
    List<Row> allRows(BoundStatement statement, String what) {
        List<Row> rows = new ArrayList<>();
        BoundStatement page = statement;
        while (true) {
            AsyncResultSet result = execute(page, what);
            result.currentPage().forEach(rows::add);
            if (!result.hasMorePages()) {
                return rows;
            }
            page = page.setPagingState(result.getExecutionInfo().getPagingState());
        }
    }

    /**
     * Waits for a stage of this runner, uninterruptibly as the driver's own blocking calls do (a request once sent is
     * answered or timed out within the operation timeout), and answers its value or rethrows its failure.
     */
    static <T> T join(CompletionStage<T> stage) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return stage.toCompletableFuture().get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw unwrap(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether a statement that failed with {@code failure} may have reached no replica or too few, and is worth sending
     * again: a replica timeout (the coordinator gave up waiting for replicas at the consistency level; a dead node not
     * yet convicted by its peers is waited for), or the connection to the coordinator lost with the request in flight
     * (the node died). Not the client's own timeout (the operation timeout is spent), nor an outage (no node answers,
     * too few replicas alive), nor an error of the request itself.
     */
    static boolean mayResend(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof WriteTimeoutException
                    || t instanceof ReadTimeoutException
                    || t instanceof ClosedConnectionException
                    || t instanceof HeartbeatException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code failure} is a coordinator's answer that replicas did not answer in time (a read or write timeout,
     * or a replica's failure, at the consistency level): the cluster is reachable, and is typically still noticing a
     * dead node. Not an outage, unlike no node answering or too few replicas alive.
     */
    static boolean isReplicaTimeout(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof QueryConsistencyException) {
                return true;
            }
        }
        return false;
    }

    /** The failure a stage of this runner completed with, unwrapped. */
    static RuntimeException unwrap(Throwable error) {
        Throwable cause = unwrapCompletion(error);
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new LockBackendException("Cassandra request failed: " + cause, cause);
    }

    private static Throwable unwrapCompletion(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /**
     * For tests: from now on, every statement is sent with Cassandra's query tracing on and its execution info is
     * added to {@code into} (a thread-safe list); {@code null} turns tracing off.
     */
    void traceInto(List<ExecutionInfo> into) {
        traced = into;
    }

    /**
     * For tests: the next statement sent for {@code what} (as named by its caller, e.g. {@code "reading the owner
     * row"}) is not sent and fails as a driver timeout would.
     */
    void failNext(String what) {
        failNext.set(what);
    }

    /**
     * For tests: the next statement sent for {@code what} reaches the store and is applied, but its answer is replaced
     * by the write timeout a coordinator answers when a replica died mid-write (one of two replicas acknowledged).
     */
    void replicaTimeoutNext(String what) {
        replicaTimeoutNext.set(what);
    }

    /** For tests: {@code hook} runs on the renewing thread before a lease's rewrite is sent again ({@link #rewrite}). */
    void beforeRewriteResend(Runnable hook) {
        beforeRewriteResend = hook;
    }

    private static WriteTimeoutException injectedWriteTimeout(Statement<?> statement, AsyncResultSet answered) {
        ConsistencyLevel level = statement.getConsistencyLevel() == null
                ? DefaultConsistencyLevel.QUORUM
                : statement.getConsistencyLevel();
        return new WriteTimeoutException(answered.getExecutionInfo().getCoordinator(), level, 1, 2, WriteType.SIMPLE);
    }

    /** The cluster and keyspace, as named in failures. */
    String where() {
        return where;
    }

    /** The operation timeout of every statement. */
    Duration timeout() {
        return timeout;
    }

    /** How many statements were sent since the backend opened. */
    long requests() {
        return requests.sum();
    }

    /** The failure to throw for a driver exception, naming the cluster. */
    LockBackendException failure(String what, Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof LockBackendException already) {
            return already;
        }
        if (cause instanceof UnauthorizedException) {
            String keyspace = where.substring(where.lastIndexOf('/') + 1); // where = hosts/keyspace
            return new LockBackendException(
                    "Permission denied on keyspace '" + keyspace + "' at Cassandra " + where
                            + " " + what + ": " + cause.getMessage()
                            + "; the locker's role needs SELECT and MODIFY on the"
                            + " keyspace (GRANT SELECT ON KEYSPACE " + keyspace
                            + " TO <role>; GRANT MODIFY ON KEYSPACE "
                            + keyspace + " TO <role>)",
                    cause);
        }
        return new LockBackendException("Cassandra at " + where + " failed " + what + ": " + cause, cause);
    }

    @Override
    public String toString() {
        return "CassandraCalls[" + where + "]";
    }

    /**
     * Stops {@code thread}, one of the backend's own timer threads, and waits at most a second for a task it had
     * started: such a task sends statements without waiting for their answers, so it ends at once, and its session may
     * be closed after this returns. A statement sent as the session closed made Netty log an ERROR with a stack trace
     * ("Event loop shut down?"); see {@code CassandraLockersTest}.
     */
    static void stopBeforeTheSessionCloses(ExecutorService thread) {
        thread.shutdownNow();
        try {
            if (!thread.awaitTermination(1, TimeUnit.SECONDS)) {
                LOG.debug("A task of the backend still runs after 1 s; closing its session anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
