package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.InvalidKeyspaceException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.schema.KeyspaceMetadata;
import com.datastax.oss.driver.api.core.metadata.schema.TableMetadata;
import io.distlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Opens the driver session of a backend or time service, and checks or creates the schema. */
final class CassandraConnection {

    /** Schema changes wait for every node to agree; on a busy cluster that takes longer than a lock operation. */
    private static final Duration SCHEMA_TIMEOUT = Duration.ofSeconds(60);

    private CassandraConnection() {}

    /**
     * Connects to the keyspace, blocking at most {@code connectTimeout}.
     *
     * @throws LockBackendException naming the hosts if no node answered in time
     */
    static CqlSession open(CassandraSettings settings, Duration connectTimeout) {
        CassandraLocation location = settings.location();
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, settings.operationTimeout())
                .withDuration(DefaultDriverOption.CONNECTION_CONNECT_TIMEOUT, connectTimeout)
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, connectTimeout)
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, connectTimeout)
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, SCHEMA_TIMEOUT)
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, SCHEMA_TIMEOUT)
                // A node that comes back is used again within two seconds, not the driver's default minute.
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
                .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(2))
                .withBoolean(DefaultDriverOption.REQUEST_WARN_IF_SET_KEYSPACE, false)
                // Closing a locker waits for the driver's event loops to stay idle this long (2 s by default); every
                // request has ended by then.
                .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
                .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, 0)
                // Only our keyspace's schema is fetched: opening a locker stays quick on a cluster with many tables.
                .withStringList(DefaultDriverOption.METADATA_SCHEMA_REFRESHED_KEYSPACES, List.of(location.keyspace()))
                .build();
        CompletableFuture<CqlSession> opening = CqlSession.builder()
                .addContactPoints(location.contactPoints())
                .withLocalDatacenter(settings.localDatacenter())
                .withKeyspace(CqlIdentifier.fromInternal(location.keyspace()))
                .withConfigLoader(config)
                .buildAsync()
                .toCompletableFuture();
        try {
            return opening.get(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            opening.thenAccept(CqlSession::close);
            throw new LockBackendException("Could not connect to Cassandra at " + location.hosts() + " within "
                    + connectTimeout + " (option connectTimeout); is the cluster running and reachable from here?");
        } catch (InterruptedException e) {
            opening.thenAccept(CqlSession::close);
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted while connecting to Cassandra at " + location.hosts(), e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof InvalidKeyspaceException) {
                throw new LockBackendException(
                        "Keyspace '" + location.keyspace() + "' does not exist in Cassandra at "
                                + location.hosts() + "; create it first, e.g. CREATE KEYSPACE " + location.keyspace()
                                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
                        cause);
            }
            throw new LockBackendException(
                    "Could not connect to Cassandra at " + location.hosts() + ": " + cause, cause);
        }
    }

    /**
     * Makes sure the backend's tables exist in the keyspace: creates the missing ones when {@code create} (each
     * statement is idempotent), otherwise fails naming them.
     */
    static void ensureSchema(CqlSession session, CassandraSettings settings) {
        String keyspace = settings.location().keyspace();
        Optional<KeyspaceMetadata> metadata = session.getMetadata().getKeyspace(CqlIdentifier.fromInternal(keyspace));
        if (metadata.isEmpty()) {
            metadata = session.getMetadata().getKeyspace(CqlIdentifier.fromCql(keyspace));
        }
        if (metadata.isEmpty()) {
            throw new LockBackendException("Keyspace '" + keyspace + "' does not exist in Cassandra at "
                    + settings.location().hosts() + "; create it first, e.g. CREATE KEYSPACE " + keyspace
                    + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}");
        }
        KeyspaceMetadata ks = metadata.get();
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < CassandraStatements.TABLES.size(); i++) {
            String name = CassandraStatements.TABLES.get(i);
            Optional<TableMetadata> table = ks.getTable(name);
            if (table.isEmpty()) {
                missing.add(CassandraStatements.SCHEMA.get(i));
                continue;
            }
            for (String column : CassandraStatements.REQUIRED_COLUMNS.getOrDefault(name, List.of())) {
                if (table.get().getColumn(column).isEmpty()) {
                    throw new LockBackendException("Table " + keyspace + "." + name + " has an older layout (no column"
                            + " '" + column + "'); drop it while no lock is held and open with "
                            + CassandraOptions.CREATE_SCHEMA + "=true, or run: " + CassandraStatements.SCHEMA.get(i));
                }
            }
        }
        if (missing.isEmpty()) {
            return;
        }
        if (!settings.createSchema()) {
            throw new LockBackendException("Keyspace '" + keyspace + "' lacks the lock tables; open with option "
                    + CassandraOptions.CREATE_SCHEMA + "=true or run: " + String.join("; ", missing));
        }
        for (String cql : missing) {
            try {
                session.execute(SimpleStatement.newInstance(cql).setTimeout(SCHEMA_TIMEOUT));
            } catch (DriverException e) {
                throw new LockBackendException(
                        "Could not create the lock tables in keyspace '" + keyspace + "': " + e, e);
            }
        }
    }
}
