package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.WakeUps;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Cassandra backend: {@code cassandra://host[:port][,host[:port]...]/keyspace} (port 9042 when omitted), on the
 * Apache Cassandra Java driver.
 *
 * <h2>Algorithms</h2>
 * {@code algorithm=queue} (default) is seed 000's fair lock (section 5): a queue row per lock ordered by tickets from
 * the GlobalTime service, an owner row, all reads and writes at QUORUM, no lightweight transaction in the lock path.
 * {@code algorithm=legacy} is the algorithm it replaced (section 4), kept as a baseline for the benchmark: not fair.
 * Both keep a lock by TTLs on its cells that the locker rewrites ({@link io.distlock.LeaseModel#RENEWED_TTL}).
 *
 * <h2>Options</h2>
 * See {@link CassandraLockOptions} for the names and a typed builder: {@code localDatacenter}, {@code consistency}, {@code
 * algorithm}, {@code pollMin}, {@code pollMax}, {@code createSchema}, {@code fencing}, {@code timeService}, {@code
 * timePeriod}, {@code timeMaxLead}, {@code clockDrift}, {@code keyRetention}; the connection's {@code user}, {@code password} (or {@code
 * passwordFile}, {@code passwordEnv}), {@code tls}, {@code caFile}, {@code certFile}, {@code keyFile}, {@code
 * verifyHost} and {@code driverConfig}; and the common {@code ttl}, {@code connectTimeout} (which is also each store
 * request's timeout) and {@code lockDelay} (the TTL of a grant's cells is the lease plus the delay).
 *
 * <p>An application's own {@code CqlSession} is used through {@link CassandraLockers#using}.
 *
 * <p>Opening connects (at most {@code connectTimeout}), checks that the keyspace has the lock tables (creating them
 * with {@code createSchema=true}), and for the queue algorithm reads GlobalTime once.
 */
public final class CassandraLockBackendProvider implements LockBackendProvider {

    private static final Logger LOG = LoggerFactory.getLogger(CassandraLockBackendProvider.class);

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public CassandraLockBackendProvider() {}

    /** {@code cassandra}. */
    @Override
    public String name() {
        return "cassandra";
    }

    /** {@code cassandra}. */
    @Override
    public Set<String> uriSchemes() {
        return Set.of("cassandra");
    }

    /**
     * Connects and prepares the statements.
     *
     * @throws LockConfigurationException if the URI or an option is malformed
     * @throws LockBackendException if the cluster cannot be reached in time, refuses the credentials or the TLS
     *     handshake, or lacks the keyspace or tables; never naming a password
     */
    @Override
    public LockBackend open(BackendConfig config) {
        CassandraSettings settings = CassandraSettings.read(config);
        CassandraClientSettings client = CassandraClientSettings.read(config);
        config.rejectUnknownOptions(name());
        CqlSession session = CassandraConnection.open(settings, client, config.connectTimeout());
        return openOn(session, true, settings, config);
    }

    /**
     * Opens the backend on {@code session}: checks or creates the tables, prepares the statements, and for the queue
     * algorithm starts the GlobalTime replica. On failure closes the session if {@code ownsSession}; the backend's
     * {@code close()} closes it only then.
     */
    static LockBackend openOn(
            CqlSession session, boolean ownsSession, CassandraSettings settings, BackendConfig config) {
        try {
            CassandraConnection.Schema schema = CassandraConnection.ensureSchema(session, settings);
            int gcGrace = schema.gcGraceSeconds();
            int markTtl = settings.markTtlSeconds(gcGrace);
            if (markTtl < gcGrace) {
                LOG.warn(
                        "Option '{}' ({}s) is shorter than gc_grace_seconds ({}) of table {}.{}: released keys keep"
                                + " their tombstones {} s anyway, and a locker new to a key idle longer than {}s reads"
                                + " over them; run ALTER TABLE ... WITH gc_grace_seconds = {} on the lock tables ({})",
                        CassandraLockOptions.KEY_RETENTION,
                        markTtl,
                        gcGrace,
                        settings.location().keyspace(),
                        CassandraStatements.QUEUE_TABLE,
                        gcGrace,
                        markTtl,
                        markTtl,
                        String.join(", ", CassandraStatements.DELETED_FROM));
            }
            CassandraCalls calls = new CassandraCalls(
                    session,
                    settings.location().hosts() + "/" + settings.location().keyspace(),
                    settings.operationTimeout(),
                    config.ticker());
            CassandraStatements statements = new CassandraStatements(
                    session,
                    settings.location().keyspace(),
                    settings.consistency(),
                    settings.serialConsistency(),
                    markTtl,
                    schema.releaseTable());
            GlobalTime time = null;
            LockAlgorithm algorithm;
            WakeUps wakeUps = new WakeUps();
            if (settings.algorithm() == CassandraLockOptions.Algorithm.QUEUE) {
                time = new GlobalTime(
                        calls,
                        statements,
                        config.clock(),
                        config.ticker(),
                        settings.timePeriod(),
                        settings.timeMaxLead(),
                        settings.embeddedTimeService());
                if (!settings.embeddedTimeService()) {
                    // Lockers that only read the cell need the stand-alone service to keep it going.
                    time.requireAlive(settings.timePeriod().multipliedBy(GlobalTime.STALE_PERIODS));
                }
                algorithm = new QueueAlgorithm(
                        calls,
                        statements,
                        time,
                        wakeUps,
                        config.ticker(),
                        settings.pollMin(),
                        settings.pollMax(),
                        config.connectTimeout(),
                        settings.validity(),
                        config.lockDelay());
            } else {
                algorithm = new LegacyAlgorithm(
                        calls,
                        statements,
                        config.ticker(),
                        settings.validity(),
                        wakeUps,
                        config.connectTimeout(),
                        config.lockDelay());
            }
            return new CassandraLockBackend(
                    session, ownsSession, settings, calls, statements, time, algorithm, config.clock());
        } catch (RuntimeException e) {
            if (ownsSession) {
                session.close();
            }
            if (e instanceof LockBackendException || e instanceof LockConfigurationException) {
                throw e;
            }
            throw new LockBackendException(
                    "Could not open the Cassandra backend at "
                            + settings.location().hosts() + ": " + e,
                    e);
        }
    }
}
