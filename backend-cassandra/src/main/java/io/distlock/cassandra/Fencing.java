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

    private static final String LAST_TOKEN = "last_token";

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
     *
     * <p>Only a conditional update gives a token, so tokens are those of the counter's Paxos history whatever the
     * guesses were. The first guess is a plain read at the backend's consistency, not a serial one: a serial read is
     * a Paxos round of its own, and while the replicas have not yet noticed that one of them died it waits for the
     * dead one until the server's read timeout (10 s in the tests' clusters). A guess that is behind (a Paxos write
     * not yet seen by that read) costs one refused update, which answers the counter's current value: the next guess.
     */
    long next(String row, String key) {
        Row read = calls.execute(statements.readFenceHint.bind(row), "reading the fencing counter")
                .one();
        Long current = read == null || read.isNull(0) ? null : read.getLong(0);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            AsyncResultSet answer = current == null
                    ? calls.execute(statements.createFence.bind(row), "creating the fencing counter")
                    : calls.execute(
                            statements.advanceFence.bind(current + 1, row, current), "advancing the fencing counter");
            if (answer.wasApplied()) {
                return current == null ? 1L : current + 1;
            }
            current = lastTokenIn(answer.one());
        }
        throw new LockBackendException("Could not advance the fencing counter of lock '" + key + "' in " + MAX_ATTEMPTS
                + " attempts: other writers keep changing it");
    }

    /**
     * The counter's value a refused conditional update answers (the row as the Paxos round read it); null when the
     * counter does not exist.
     */
    private static Long lastTokenIn(Row refused) {
        if (refused == null || !refused.getColumnDefinitions().contains(LAST_TOKEN) || refused.isNull(LAST_TOKEN)) {
            return null;
        }
        return refused.getLong(LAST_TOKEN);
    }
}
