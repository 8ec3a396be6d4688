package io.distlock.benchmarks;

/** The CQL of the Cassandra LWT floor, in one place. */
final class LwtStatements {

    static final String CREATE_KEYSPACE = "CREATE KEYSPACE IF NOT EXISTS %s WITH replication ="
            + " {'class': 'SimpleStrategy', 'replication_factor': %d}";
    static final String CREATE_TABLE =
            "CREATE TABLE IF NOT EXISTS %s.bench_lwt_locks (lock_key text PRIMARY KEY, owner text)";
    static final String ACQUIRE =
            "INSERT INTO %s.bench_lwt_locks (lock_key, owner) VALUES (?, ?) IF NOT EXISTS" + " USING TTL 30";
    static final String RELEASE = "DELETE FROM %s.bench_lwt_locks WHERE lock_key = ? IF owner = ?";

    private LwtStatements() {}
}
