package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockBackendException;
import java.util.OptionalLong;

/**
 * Fencing tokens from a table of its own, one partition per lock, written only with lightweight transactions (never
 * mixed with the lock path's plain writes, which would be unsafe on one partition). The holder of a lock draws the
 * next token right after the grant; holders draw one after another, so tokens increase strictly in acquisition order.
 */
final class Fencing {

    private static final int MAX_ATTEMPTS = 20;

    private final CassandraCalls calls;
    private final CassandraStatements statements;

    Fencing(CassandraCalls calls, CassandraStatements statements) {
        this.calls = calls;
        this.statements = statements;
    }

    /**
     * The last token the counter in partition {@code row} gave, read at the serial consistency (a look-up, no write);
     * empty if it never gave one.
     */
    OptionalLong last(String row) {
        Row current = calls.execute(statements.readFence.bind(row), "reading the fencing counter")
                .one();
        return current == null ? OptionalLong.empty() : OptionalLong.of(current.getLong(0));
    }

    /** The next token of {@code key}: one more than the last one given, 1 for the first. */
    long next(String key) {
        return next(key, key);
    }

    /**
     * The next token of the counter in partition {@code row} ({@code key}'s partition in its space, see {@link
     * SharedEntries}), one more than the last one given, 1 for the first; {@code key} names the lock in messages.
     */
    long next(String row, String key) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Row current = calls.execute(statements.readFence.bind(row), "reading the fencing counter")
                    .one();
            if (current == null) {
                AsyncResultSet created =
                        calls.execute(statements.createFence.bind(row), "creating the fencing counter");
                if (created.wasApplied()) {
                    return 1L;
                }
                continue;
            }
            long token = current.getLong(0);
            AsyncResultSet advanced =
                    calls.execute(statements.advanceFence.bind(token + 1, row, token), "advancing the fencing counter");
            if (advanced.wasApplied()) {
                return token + 1;
            }
        }
        throw new LockBackendException("Could not advance the fencing counter of lock '" + key + "' in " + MAX_ATTEMPTS
                + " attempts: other writers keep changing it");
    }
}
