package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.InvalidKeyspaceException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.UnauthorizedException;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.toolkit.DurationText;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opens the driver session of a backend or time service, and checks or creates the schema. */
final class CassandraConnection {

    private static final Logger LOG = LoggerFactory.getLogger(CassandraConnection.class);

    /** Schema changes wait for every node to agree; on a busy cluster that takes longer than a lock operation. */
    private static final Duration SCHEMA_TIMEOUT = Duration.ofSeconds(60);

    /**
     * How long the driver's admin event loop stays idle before it ends, when a locker's own session closes (see {@link
     * #defaults}); a close takes this much longer.
     */
    private static final int ADMIN_QUIET_MILLIS = 100;

    /** The driver's own bound on its admin loop's shutdown (15 s), in the unit of {@link #ADMIN_QUIET_MILLIS}. */
    private static final int ADMIN_SHUTDOWN_TIMEOUT_MILLIS = 15_000;

    private CassandraConnection() {}

    /**
     * Connects to the keyspace with the connection's options (credentials, TLS, the driver's configuration file),
     * blocking at most {@code connectTimeout}.
     *
     * @throws io.distlock.LockConfigurationException if the TLS material cannot be loaded
     * @throws LockBackendException naming the hosts and the cause (authentication failed, certificate not trusted, no
     *     node answered in time, ...); never a password
     */
    static CqlSession open(CassandraSettings settings, CassandraClientSettings client, Duration connectTimeout) {
        CassandraLocation location = settings.location();
        CqlSessionBuilder builder = CqlSession.builder()
                .addContactPoints(location.contactPoints())
                .withKeyspace(CqlIdentifier.fromInternal(location.keyspace()));
        boolean fileNamesDatacenter = false;
        if (client.driverConfig().isPresent()) {
            DriverConfigLoader file = driverConfigFile(client.driverConfig().get());
            builder.withConfigLoader(file);
            fileNamesDatacenter = file.getInitialConfig()
                    .getDefaultProfile()
                    .isDefined(DefaultDriverOption.LOAD_BALANCING_LOCAL_DATACENTER);
        } else {
            builder.withConfigLoader(defaults(location, settings.operationTimeout(), connectTimeout));
        }
        if (client.localDatacenter().isPresent()) {
            builder.withLocalDatacenter(client.localDatacenter().get());
        } else if (!fileNamesDatacenter) {
            builder.withLocalDatacenter(CassandraLockOptions.DEFAULT_LOCAL_DATACENTER);
        }
        if (client.user().isPresent()) {
            builder.withAuthCredentials(
                    client.user().get(), client.password().orElseThrow().reveal());
        }
        client.tls().ifPresent(tls -> builder.withSslEngineFactory(PemSslEngineFactory.create(tls)));
        CompletableFuture<CqlSession> opening = builder.buildAsync().toCompletableFuture();
        try {
            return opening.get(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            opening.thenAccept(CqlSession::close);
            throw new LockBackendException("Could not connect to Cassandra at " + location.hosts() + " within "
                    + DurationText.of(connectTimeout)
                    + " (option connectTimeout); is the cluster running and reachable from here?"
                    + (client.tls().isEmpty() ? CassandraFailures.PLAINTEXT_HINT : ""));
        } catch (InterruptedException e) {
            opening.thenAccept(CqlSession::close);
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted while connecting to Cassandra at " + location.hosts(), e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof InvalidKeyspaceException) {
                throw new LockBackendException(CassandraFailures.noKeyspace(location), cause);
            }
            throw CassandraFailures.describe(location, client, cause);
        }
    }

    /**
     * The driver's configuration from {@code file} over the driver's defaults (distlock's own defaults do not apply).
     *
     * @throws LockConfigurationException if the file is not a valid configuration
     */
    private static DriverConfigLoader driverConfigFile(Path file) {
        DriverConfigLoader loader = DriverConfigLoader.fromPath(file);
        try {
            loader.getInitialConfig();
            return loader;
        } catch (RuntimeException e) {
            loader.close();
            throw new LockConfigurationException(
                    "Option '" + CassandraLockOptions.DRIVER_CONFIG + "': '" + file
                            + "' is not a valid driver configuration: " + e.getMessage(),
                    e);
        }
    }

    /** distlock's driver settings when no driver configuration file is given. */
    private static DriverConfigLoader defaults(
            CassandraLocation location, Duration operationTimeout, Duration connectTimeout) {
        return DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, operationTimeout)
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
                // request has ended by then. The admin loop keeps a short one: the session's close hands it its work
                // and then listens on the hand-off, and a loop that finished the close and ended before the listener
                // came made Netty log an ERROR with a stack trace on the closing thread (often, on a busy machine).
                .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
                .withString(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_UNIT, TimeUnit.MILLISECONDS.name())
                .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, ADMIN_QUIET_MILLIS)
                .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_TIMEOUT, ADMIN_SHUTDOWN_TIMEOUT_MILLIS)
                // Only our keyspace's schema is fetched: opening a locker stays quick on a cluster with many tables.
                .withStringList(DefaultDriverOption.METADATA_SCHEMA_REFRESHED_KEYSPACES, List.of(location.keyspace()))
                // A schema change returns once the driver has refreshed its schema, which it otherwise gathers for a
                // second first: creating the seven lock tables took 8 s instead of 1. Only this keyspace's changes
                // are refreshed, and nothing else changes it often, so there is nothing to gather.
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
                .build();
    }

    /**
     * Makes sure the backend's tables exist in the keyspace: creates the missing ones when {@code create} (each
     * statement is idempotent), otherwise fails naming them. Reads {@code system_schema} rather than the driver's
     * schema metadata, which an application's session may have turned off or limited to other keyspaces.
     *
     * A keyspace that lacks only {@linkplain CassandraStatements#OPTIONAL_TABLES optional tables} (made by an older
     * version) opens without them when not {@code create}, with a warning naming the statement that adds them.
     *
     * First it checks that the cluster can answer a lock at all ({@link CassandraPlacement}): a local data center
     * with no node, or a keyspace replicated more than the nodes can answer for, fails here, not at every lock.
     *
     * @return the queue table's {@code gc_grace_seconds} and whether the keyspace has the release table
     */
    static Schema ensureSchema(CqlSession session, CassandraSettings settings) {
        CassandraPlacement.checkLocalNodes(session, settings);
        CassandraPlacement.checkReplication(session, settings, SCHEMA_TIMEOUT);
        boolean releaseTable = createMissingTables(session, settings);
        String keyspace = settings.location().keyspace();
        SimpleStatement gcGraceQuery = SimpleStatement.newInstance(
                        "SELECT gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
                        keyspace,
                        CassandraStatements.QUEUE_TABLE)
                .setTimeout(SCHEMA_TIMEOUT);
        try {
            Row row = session.execute(gcGraceQuery).one();
            return new Schema(row == null ? CassandraStatements.MARK_TTL_SECONDS : row.getInt(0), releaseTable);
        } catch (DriverException e) {
            throw new LockBackendException(
                    "Could not read the schema of keyspace '" + keyspace + "' at "
                            + settings.location().hosts() + ": " + e,
                    e);
        }
    }

    /**
     * What {@link #ensureSchema} found.
     *
     * @param gcGraceSeconds the queue table's {@code gc_grace_seconds}
     * @param releaseTable whether the keyspace has {@link CassandraStatements#RELEASE_TABLE}
     */
    record Schema(int gcGraceSeconds, boolean releaseTable) {}

    /** Creates or checks the tables; answers whether the release table is there. */
    private static boolean createMissingTables(CqlSession session, CassandraSettings settings) {
        String keyspace = settings.location().keyspace();
        SimpleStatement keyspaceQuery = SimpleStatement.newInstance(
                        "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", keyspace)
                .setTimeout(SCHEMA_TIMEOUT);
        SimpleStatement columnsQuery = SimpleStatement.newInstance(
                        "SELECT table_name, column_name FROM system_schema.columns WHERE keyspace_name = ?", keyspace)
                .setTimeout(SCHEMA_TIMEOUT);
        Map<String, Set<String>> columns = new HashMap<>();
        try {
            if (session.execute(keyspaceQuery).one() == null) {
                throw new LockBackendException(CassandraFailures.noKeyspace(settings.location()));
            }
            for (Row row : session.execute(columnsQuery)) {
                columns.computeIfAbsent(row.getString("table_name"), t -> new HashSet<>())
                        .add(row.getString("column_name"));
            }
        } catch (DriverException e) {
            throw new LockBackendException(
                    "Could not read the schema of keyspace '" + keyspace + "' at "
                            + settings.location().hosts() + ": " + e,
                    e);
        }
        String qualified = CqlIdentifier.fromInternal(keyspace).asCql(true);
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < CassandraStatements.TABLES.size(); i++) {
            String name = CassandraStatements.TABLES.get(i);
            Set<String> table = columns.get(name);
            if (table == null) {
                missing.add(CassandraStatements.createTable(i, qualified, settings.newTablesGcGraceSeconds()));
                continue;
            }
            for (String column : CassandraStatements.REQUIRED_COLUMNS.getOrDefault(name, List.of())) {
                if (!table.contains(column)) {
                    throw new LockBackendException("Table " + keyspace + "." + name + " has an older layout (no column"
                            + " '" + column + "'); drop it while no lock is held and open with "
                            + CassandraLockOptions.CREATE_SCHEMA + "=true, or run: "
                            + CassandraStatements.createTable(i, qualified, settings.newTablesGcGraceSeconds()));
                }
            }
        }
        if (missing.isEmpty()) {
            return true;
        }
        if (!settings.createSchema() && missing.stream().allMatch(CassandraConnection::optional)) {
            LOG.warn(
                    "Keyspace '{}' lacks table {}: its lockers neither ask holders to let go nor hear such requests"
                            + " (requestRelease); open once with {}=true or run: {}",
                    keyspace,
                    CassandraStatements.RELEASE_TABLE,
                    CassandraLockOptions.CREATE_SCHEMA,
                    String.join("; ", missing));
            return false;
        }
        if (!settings.createSchema()) {
            throw new LockBackendException("Keyspace '" + keyspace + "' lacks the lock tables; open with option "
                    + CassandraLockOptions.CREATE_SCHEMA + "=true or run: " + String.join("; ", missing));
        }
        for (String cql : missing) {
            try {
                session.execute(SimpleStatement.newInstance(cql).setTimeout(SCHEMA_TIMEOUT));
            } catch (UnauthorizedException e) {
                throw new LockBackendException(
                        "Permission denied on keyspace '" + keyspace + "': cannot create the"
                                + " lock tables (" + e.getMessage() + "); " + CassandraLockOptions.CREATE_SCHEMA
                                + "=true needs CREATE on the keyspace, or create them as another role: "
                                + String.join("; ", missing),
                        e);
            } catch (DriverException e) {
                throw new LockBackendException(
                        "Could not create the lock tables in keyspace '" + keyspace + "': " + e, e);
            }
        }
        return true;
    }

    /** Whether a {@code CREATE TABLE} of {@link CassandraStatements#SCHEMA} makes an optional table. */
    private static boolean optional(String createTable) {
        return CassandraStatements.OPTIONAL_TABLES.stream().anyMatch(table -> createTable.contains("." + table + " "));
    }
}
