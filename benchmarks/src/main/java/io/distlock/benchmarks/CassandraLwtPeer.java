package io.distlock.benchmarks;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw Cassandra floor: {@code peer:cassandra-lwt://h1[:9042][,h2...]/keyspace[?dc=datacenter1&rf=1]}. {@code INSERT
 * ... IF NOT EXISTS USING TTL 30} takes the key, {@code DELETE ... IF owner = ?} frees it (Paxos, SERIAL); a busy key is
 * tried again after {@link Backoff#PAUSE_NANOS}. Creates the keyspace (replication factor {@code rf}) and its table if
 * missing.
 */
public final class CassandraLwtPeer implements BenchTargetFactory {

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "cassandra-lwt");
    }

    @Override
    public BenchTarget open(String spec) {
        PeerSpec peer = PeerSpec.parse(spec, 9042);
        String keyspace = peer.path().isEmpty() ? "distlock_bench" : peer.path();
        if (!keyspace.matches("[A-Za-z][A-Za-z0-9_]{0,47}")) {
            throw new IllegalArgumentException("Malformed keyspace '" + keyspace + "' in peer spec '" + spec + "'");
        }
        CqlSessionBuilder builder = CqlSession.builder()
                .withLocalDatacenter(peer.option("dc", "datacenter1"))
                // the keyspace and table are made in a second instead of the driver's second-long wait per statement
                // (as distlock's own session does: cassandra.md, "Schema")
                .withConfigLoader(DriverConfigLoader.programmaticBuilder()
                        .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
                        .build());
        for (String host : peer.hosts()) {
            builder.addContactPoint(new InetSocketAddress(PeerSpec.host(host), PeerSpec.port(host)));
        }
        CqlSession session = builder.build();
        try {
            session.execute(
                    String.format(LwtStatements.CREATE_KEYSPACE, keyspace, Integer.parseInt(peer.option("rf", "1"))));
            session.execute(String.format(LwtStatements.CREATE_TABLE, keyspace));
            PreparedStatement acquire = session.prepare(String.format(LwtStatements.ACQUIRE, keyspace));
            PreparedStatement release = session.prepare(String.format(LwtStatements.RELEASE, keyspace));
            return new Floor(session, acquire, release);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /** Each acquisition writes an owner of its own, so the threads of one client exclude each other. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return "peer:cassandra-lwt://h:9042/keyspace (raw LWT INSERT IF NOT EXISTS floor)";
    }

    private record Floor(CqlSession session, PreparedStatement acquire, PreparedStatement release, AtomicLong requests)
            implements BenchTarget {

        Floor(CqlSession session, PreparedStatement acquire, PreparedStatement release) {
            this(session, acquire, release, new AtomicLong());
        }

        @Override
        public Held acquire(String key) throws InterruptedException {
            String owner = UUID.randomUUID().toString();
            while (true) {
                requests.incrementAndGet();
                boolean applied = session.execute(acquire.bind(key, owner)
                                .setConsistencyLevel(ConsistencyLevel.QUORUM)
                                .setSerialConsistencyLevel(ConsistencyLevel.SERIAL))
                        .wasApplied();
                if (applied) {
                    return () -> {
                        requests.incrementAndGet();
                        session.execute(release.bind(key, owner)
                                .setConsistencyLevel(ConsistencyLevel.QUORUM)
                                .setSerialConsistencyLevel(ConsistencyLevel.SERIAL));
                    };
                }
                Backoff.pause();
            }
        }

        @Override
        public OptionalLong storeRequests() {
            return OptionalLong.of(requests.get());
        }

        @Override
        public void close() {
            session.close();
        }
    }
}
