package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.servererrors.QueryConsistencyException;
import com.datastax.oss.driver.api.core.servererrors.UnauthorizedException;
import io.distlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Runs the backend's statements on one driver session: each execution counts as one store request, and every driver
 * failure becomes a {@link LockBackendException} naming the cluster and what was being done.
 */
final class CqlCalls {

    private final CqlSession session;
    private final String where;
    private final Duration timeout;
    private final LongAdder requests = new LongAdder();
    private volatile List<ExecutionInfo> traced; // null: no tracing
    private final AtomicReference<String> failNext = new AtomicReference<>(); // tests: a request to fail once

    CqlCalls(CqlSession session, String where, Duration timeout) {
        this.session = session;
        this.where = where;
        this.timeout = timeout;
    }

    /** Runs one statement and waits for its answer (at most the operation timeout): {@link #send}, joined. */
    <S extends Statement<S>> AsyncResultSet execute(S statement, String what) {
        return join(send(statement, what));
    }

    /**
     * Sends one statement without waiting; the stage completes on a driver thread, and fails with a {@link
     * LockBackendException} naming the cluster and what was being done.
     */
    <S extends Statement<S>> CompletionStage<AsyncResultSet> send(S statement, String what) {
        requests.increment();
        String failing = failNext.get();
        if (failing != null && failing.equals(what) && failNext.compareAndSet(failing, null)) {
            return CompletableFuture.failedFuture(failure(
                    what, new DriverTimeoutException("Query timed out after " + timeout + " (injected by a test)")));
        }
        List<ExecutionInfo> tracing = traced;
        CompletionStage<AsyncResultSet> sent;
        try {
            sent = session.executeAsync(statement.setTimeout(timeout).setTracing(tracing != null));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(failure(what, e));
        }
        return sent.handle((result, error) -> {
            if (error != null) {
                throw failure(what, error);
            }
            if (tracing != null) {
                tracing.add(result.getExecutionInfo());
            }
            return result;
        });
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

    /** The failure a stage of this runner completed with, unwrapped. */
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

    static RuntimeException unwrap(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new LockBackendException("Cassandra request failed: " + cause, cause);
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
        return "CqlCalls[" + where + "]";
    }
}
