package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
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

    CqlCalls(CqlSession session, String where, Duration timeout) {
        this.session = session;
        this.where = where;
        this.timeout = timeout;
    }

    /** Runs one statement and waits for its answer (at most the operation timeout). */
    ResultSet execute(BoundStatement statement, String what) {
        requests.increment();
        try {
            return session.execute(statement.setTimeout(timeout));
        } catch (DriverException e) {
            throw failure(what, e);
        }
    }

    /** Sends one statement without waiting. */
    CompletionStage<AsyncResultSet> executeAsync(BoundStatement statement) {
        requests.increment();
        return session.executeAsync(statement.setTimeout(timeout));
    }

    /**
     * Runs several statements at once (one round trip of time) and waits for all: the first failure is thrown after
     * every one has answered, so none is still in flight when the caller goes on.
     */
    void executeAll(String what, BoundStatement... statements) {
        List<CompletionStage<AsyncResultSet>> sent = new ArrayList<>(statements.length);
        for (BoundStatement statement : statements) {
            sent.add(executeAsync(statement));
        }
        RuntimeException first = null;
        for (CompletionStage<AsyncResultSet> stage : sent) {
            try {
                awaitUninterruptibly(stage);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e instanceof DriverException d ? failure(what, d) : e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** The rows of a small result (one page). */
    List<Row> rows(BoundStatement statement, String what) {
        return execute(statement, what).all();
    }

    /** How many statements were sent since the backend opened. */
    long requests() {
        return requests.sum();
    }

    /** The failure to throw for a driver exception, naming the cluster. */
    LockBackendException failure(String what, Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return new LockBackendException("Cassandra at " + where + " failed " + what + ": " + cause, cause);
    }

    private static void awaitUninterruptibly(CompletionStage<?> stage) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    stage.toCompletableFuture().get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException r) {
                        throw r;
                    }
                    throw new CompletionException(cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "CqlCalls[" + where + "]";
    }
}
