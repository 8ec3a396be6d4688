package io.distlock.cassandra;

import io.distlock.RemoteLockerBuilder;
import io.distlock.toolkit.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The options of the Cassandra backend: their names (as URI query parameters or {@link RemoteLockerBuilder#option})
 * and a typed builder that sets them on a locker builder.
 *
 * <pre>{@code
 * RemoteLocker locker = CassandraLockOptions.create()
 *         .localDatacenter("dc1")
 *         .algorithm(CassandraLockOptions.Algorithm.QUEUE)
 *         .fencing(true)
 *         .applyTo(RemoteLockers.builder().uri("cassandra://10.0.0.1:9042,10.0.0.2:9042/locks"))
 *         .leaseTime(Duration.ofSeconds(30))
 *         .build();
 * }</pre>
 *
 * <p>Not thread-safe; build, apply, discard.
 */
public final class CassandraLockOptions {

    /** Option: the driver's local data center; default {@value #DEFAULT_LOCAL_DATACENTER}. */
    public static final String LOCAL_DATACENTER = "localDatacenter";
    /** Option: {@code QUORUM} (default), {@code LOCAL_QUORUM} or {@code ALL}: reads and writes of the lock path. */
    public static final String CONSISTENCY = "consistency";
    /** Option: {@code queue} (default, seed 000 section 5) or {@code legacy} (section 4, a baseline). */
    public static final String ALGORITHM = "algorithm";
    /** Option: the shortest poll interval of a waiter (the next in line); default 5ms. */
    public static final String POLL_MIN = "pollMin";
    /** Option: the longest poll interval of a waiter (far back in the queue); default 250ms. */
    public static final String POLL_MAX = "pollMax";
    /** Option: {@code true} to create the missing tables on open (idempotent); default {@code false}. */
    public static final String CREATE_SCHEMA = "createSchema";
    /** Option: {@code true} to hand out fencing tokens (a lightweight transaction per grant); default false. */
    public static final String FENCING = "fencing";
    /**
     * Option: {@code embedded} (default: every locker runs a GlobalTime replica) or {@code external} (a stand-alone
     * {@link TimeService} keeps the cell; lockers only read it).
     */
    public static final String TIME_SERVICE = "timeService";
    /** Option: how often a GlobalTime replica runs Listing 8; default 500ms. */
    public static final String TIME_PERIOD = "timePeriod";
    /** Option: how far ahead of the Cassandra servers' clocks GlobalTime and tickets may go; default 1s. */
    public static final String TIME_MAX_LEAD = "timeMaxLead";
    /**
     * Option: how far the Cassandra nodes' clocks may differ; a holder counts its lease valid for the lease time less
     * this (a cell expires by the clock of the node that wrote it, and is judged by the clock of the node that reads
     * it). Default 100ms, at most a tenth of the lease; an explicit value must be shorter than half the lease.
     */
    public static final String CLOCK_DRIFT = "clockDrift";
    /**
     * Option: how long a key's rows outlive its last release. The queue's low-water mark lives this long, and the
     * tables {@code createSchema=true} creates keep the tombstones of released cells this long ({@code
     * gc_grace_seconds}), so a key costs the store nothing once it has passed (and a compaction ran). Default: the
     * queue table's {@code gc_grace_seconds} (1 day on tables distlock creates, Cassandra's 10 days on others). Must be
     * longer than the lease's time to live in the store ({@code ttl} rounded up to whole seconds, plus 1 s) plus {@code
     * connectTimeout}; see the backend's documentation for why.
     */
    public static final String KEY_RETENTION = "keyRetention";

    /** Option: the Cassandra role to log in as ({@code PasswordAuthenticator}); with {@code password}. */
    public static final String USER = "user";
    /**
     * Option: the role's password; or {@code passwordFile} (a file whose first line is the password) or {@code
     * passwordEnv} (an environment variable), so that a URI kept in a configuration repository carries none.
     */
    public static final String PASSWORD = "password";
    /**
     * Option: the driver's own configuration file ({@code application.conf} syntax, under {@code datastax-java-driver});
     * whatever the driver can configure is reachable through it. The URI's hosts, keyspace and the options above still
     * apply on top of it.
     */
    public static final String DRIVER_CONFIG = "driverConfig";

    /** The data center the forked test servers and a default Cassandra install report. */
    public static final String DEFAULT_LOCAL_DATACENTER = "datacenter1";

    /** The lock algorithm. */
    public enum Algorithm {
        /** Seed 000 section 5: the fair queue (Listings 5-7). */
        QUEUE,
        /** Seed 000 section 4: shadow and main tables with random back-off; a baseline, not fair. */
        LEGACY;

        /** The option value, lower case. */
        public String optionValue() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<String, String> options = new LinkedHashMap<>();

    private CassandraLockOptions() {}

    /** An empty set of options (every option at its default). */
    public static CassandraLockOptions create() {
        return new CassandraLockOptions();
    }

    /** Sets {@value #LOCAL_DATACENTER}. */
    public CassandraLockOptions localDatacenter(String dataCenter) {
        return put(LOCAL_DATACENTER, Objects.requireNonNull(dataCenter, "dataCenter"));
    }

    /** Sets {@value #CONSISTENCY}. */
    public CassandraLockOptions consistency(String level) {
        return put(CONSISTENCY, Objects.requireNonNull(level, "level"));
    }

    /** Sets {@value #ALGORITHM}. */
    public CassandraLockOptions algorithm(Algorithm algorithm) {
        return put(ALGORITHM, algorithm.optionValue());
    }

    /** Sets {@value #POLL_MIN} and {@value #POLL_MAX}. */
    public CassandraLockOptions pollInterval(Duration min, Duration max) {
        put(POLL_MIN, min.toMillis() + "ms");
        return put(POLL_MAX, max.toMillis() + "ms");
    }

    /** Sets {@value #CREATE_SCHEMA}. */
    public CassandraLockOptions createSchema(boolean create) {
        return put(CREATE_SCHEMA, Boolean.toString(create));
    }

    /** Sets {@value #FENCING}. */
    public CassandraLockOptions fencing(boolean fencing) {
        return put(FENCING, Boolean.toString(fencing));
    }

    /** Sets {@value #TIME_SERVICE}: {@code true} for {@code embedded}, {@code false} for {@code external}. */
    public CassandraLockOptions embeddedTimeService(boolean embedded) {
        return put(TIME_SERVICE, embedded ? "embedded" : "external");
    }

    /** Sets {@value #TIME_PERIOD}. */
    public CassandraLockOptions timePeriod(Duration period) {
        return put(TIME_PERIOD, period.toMillis() + "ms");
    }

    /** Sets {@value #CLOCK_DRIFT}. */
    public CassandraLockOptions clockDrift(Duration drift) {
        return put(CLOCK_DRIFT, drift.toMillis() + "ms");
    }

    /** Sets {@value #KEY_RETENTION}. */
    public CassandraLockOptions keyRetention(Duration retention) {
        return put(KEY_RETENTION, retention.toMillis() + "ms");
    }

    /** Sets {@value #TIME_MAX_LEAD}. */
    public CassandraLockOptions timeMaxLead(Duration maxLead) {
        return put(TIME_MAX_LEAD, maxLead.toMillis() + "ms");
    }

    /** Sets {@value #USER} and {@value #PASSWORD}; the password never shows in {@link #toString()}. */
    public CassandraLockOptions credentials(String user, String password) {
        put(USER, Objects.requireNonNull(user, "user"));
        return put(PASSWORD, Objects.requireNonNull(password, "password"));
    }

    /** Sets {@value #USER} and {@code passwordFile}: the password is the first line of {@code passwordFile}. */
    public CassandraLockOptions credentialsFromFile(String user, Path passwordFile) {
        put(USER, Objects.requireNonNull(user, "user"));
        return put(PASSWORD + "File", passwordFile.toString());
    }

    /** Sets {@value #USER} and {@code passwordEnv}: the password is the value of environment variable {@code name}. */
    public CassandraLockOptions credentialsFromEnv(String user, String variable) {
        put(USER, Objects.requireNonNull(user, "user"));
        return put(PASSWORD + "Env", Objects.requireNonNull(variable, "variable"));
    }

    /**
     * Connects over TLS, trusting the certificate authorities in {@code caFile} (PEM; {@code null} for the JVM's trust
     * store): options {@code tls} and {@code caFile}.
     */
    public CassandraLockOptions tls(Path caFile) {
        put(TlsSettings.TLS, "true");
        return caFile == null ? this : put(TlsSettings.CA_FILE, caFile.toString());
    }

    /** Presents a client certificate (PEM) and its unencrypted PKCS#8 key (PEM): options {@code certFile}, {@code keyFile}. */
    public CassandraLockOptions clientCertificate(Path certFile, Path keyFile) {
        put(TlsSettings.CERT_FILE, certFile.toString());
        return put(TlsSettings.KEY_FILE, keyFile.toString());
    }

    /** Sets {@code verifyHost}: whether the server's certificate must name the host connected to (default true). */
    public CassandraLockOptions verifyHost(boolean verify) {
        return put(TlsSettings.VERIFY_HOST, Boolean.toString(verify));
    }

    /** Sets {@value #DRIVER_CONFIG}. */
    public CassandraLockOptions driverConfig(Path file) {
        return put(DRIVER_CONFIG, file.toString());
    }

    /** The options set so far, by name. */
    public Map<String, String> toMap() {
        return Map.copyOf(options);
    }

    /** Sets every option given here on {@code builder} and returns it. */
    public RemoteLockerBuilder applyTo(RemoteLockerBuilder builder) {
        options.forEach(builder::option);
        return builder;
    }

    /** The options set so far, the password shown as {@code ****}. */
    @Override
    public String toString() {
        Map<String, String> shown = new LinkedHashMap<>(options);
        shown.computeIfPresent(PASSWORD, (k, v) -> "****");
        return "CassandraLockOptions" + shown;
    }

    private CassandraLockOptions put(String name, String value) {
        options.put(name, value);
        return this;
    }
}
