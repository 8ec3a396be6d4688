package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
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
    private volatile List<ExecutionInfo> traced; // null: no tracing

    CqlCalls(CqlSession session, String where, Duration timeout) {
        this.session = session;
        this.where = where;
        this.timeout = timeout;
    }

    /** Runs one statement and waits for its answer (at most the operation timeout). */
    <S extends Statement<S>> ResultSet execute(S statement, String what) {
        requests.increment();
        List<ExecutionInfo> tracing = traced;
        try {
            ResultSet result = session.execute(statement.setTimeout(timeout).setTracing(tracing != null));
            if (tracing != null) {
                tracing.add(result.getExecutionInfo());
            }
            return result;
        } catch (DriverException e) {
            throw failure(what, e);
        }
    }

    /** Sends one statement without waiting. */
    CompletionStage<AsyncResultSet> executeAsync(BoundStatement statement) {
        requests.increment();
        List<ExecutionInfo> tracing = traced;
        if (tracing == null) {
            return session.executeAsync(statement.setTimeout(timeout));
        }
        return session.executeAsync(statement.setTimeout(timeout).setTracing(true))
                .thenApply(result -> {
                    tracing.add(result.getExecutionInfo());
                    return result;
                });
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

    /**
     * For tests: from now on, every statement is sent with Cassandra's query tracing on and its execution info is
     * added to {@code into} (a thread-safe list); {@code null} turns tracing off.
     */
    void traceInto(List<ExecutionInfo> into) {
        traced = into;
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
