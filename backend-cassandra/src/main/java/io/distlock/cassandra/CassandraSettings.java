package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.ShownText;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/** The backend's options, read and checked from a {@link BackendConfig} (see {@link CassandraLockOptions}). */
record CassandraSettings(
        CassandraLocation location,
        ConsistencyLevel consistency,
        ConsistencyLevel serialConsistency,
        CassandraLockOptions.Algorithm algorithm,
        Duration pollMin,
        Duration pollMax,
        boolean createSchema,
        boolean fencing,
        boolean embeddedTimeService,
        Duration timePeriod,
        Duration timeMaxLead,
        LeaseValidity validity,
        Duration operationTimeout,
        Optional<Duration> keyRetention,
        Duration keyRetentionFloor) {

    /** The {@code gc_grace_seconds} of the tables {@code createSchema=true} creates, unless {@code keyRetention}. */
    static final Duration DEFAULT_KEY_RETENTION = Duration.ofDays(1);

    /**
     * Reads the lock options of the backend from {@code config} (the connection's options are {@link
     * CassandraClientSettings}'); does not check for unknown ones.
     */
    static CassandraSettings read(BackendConfig config) {
        return read(config, CassandraLocation.parse(config.uri()));
    }

    /** As {@link #read(BackendConfig)}, at {@code location} instead of the URI's hosts. */
    static CassandraSettings read(BackendConfig config, CassandraLocation location) {
        String level = config.stringOption(CassandraLockOptions.CONSISTENCY, "QUORUM")
                .trim()
                .toUpperCase(Locale.ROOT);
        ConsistencyLevel consistency;
        ConsistencyLevel serial;
        switch (level) {
            case "QUORUM", "ALL" -> {
                consistency = DefaultConsistencyLevel.valueOf(level);
                serial = DefaultConsistencyLevel.SERIAL;
            }
            case "LOCAL_QUORUM" -> {
                consistency = DefaultConsistencyLevel.LOCAL_QUORUM;
                serial = DefaultConsistencyLevel.LOCAL_SERIAL;
            }
            default ->
                throw new LockConfigurationException("Option '" + CassandraLockOptions.CONSISTENCY
                        + "' must be QUORUM, LOCAL_QUORUM or ALL (the algorithm needs reads and writes that"
                        + " overlap: R + W > RF), got '" + ShownText.of(level) + "'");
        }
        String algorithmName = config.stringOption(CassandraLockOptions.ALGORITHM, "queue")
                .trim()
                .toLowerCase(Locale.ROOT);
        CassandraLockOptions.Algorithm algorithm =
                switch (algorithmName) {
                    case "queue" -> CassandraLockOptions.Algorithm.QUEUE;
                    case "legacy" -> CassandraLockOptions.Algorithm.LEGACY;
                    default ->
                        throw new LockConfigurationException("Option '" + CassandraLockOptions.ALGORITHM
                                + "' must be queue or legacy, got '" + ShownText.of(algorithmName) + "'");
                };
        Duration pollMin = config.durationOption(CassandraLockOptions.POLL_MIN, Duration.ofMillis(5));
        Duration pollMax = config.durationOption(CassandraLockOptions.POLL_MAX, Duration.ofMillis(250));
        if (pollMax.compareTo(pollMin) < 0) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.POLL_MAX + "' ("
                    + DurationText.of(pollMax)
                    + ") must not be shorter than '" + CassandraLockOptions.POLL_MIN + "' (" + DurationText.of(pollMin)
                    + ")");
        }
        boolean createSchema = config.booleanOption(CassandraLockOptions.CREATE_SCHEMA, false);
        boolean fencing = config.booleanOption(CassandraLockOptions.FENCING, false);
        String timeService = config.stringOption(CassandraLockOptions.TIME_SERVICE, "embedded")
                .trim()
                .toLowerCase(Locale.ROOT);
        if (!timeService.equals("embedded") && !timeService.equals("external")) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.TIME_SERVICE
                    + "' must be embedded or external, got '" + ShownText.of(timeService) + "'");
        }
        Duration timePeriod = config.durationOption(CassandraLockOptions.TIME_PERIOD, Duration.ofMillis(500));
        Duration timeMaxLead = config.durationOption(CassandraLockOptions.TIME_MAX_LEAD, Duration.ofSeconds(1));
        LeaseValidity validity = config.option(CassandraLockOptions.CLOCK_DRIFT).isPresent()
                ? LeaseValidity.explicit(
                        config.durationOption(CassandraLockOptions.CLOCK_DRIFT, Duration.ZERO), config.leaseTime())
                : LeaseValidity.byDefault();
        // A release's deletes must outlive every copy of the cells they delete: once a tombstone is purged, a replica
        // that missed the delete would serve the cell again unless it has expired by then (its TTL runs from its last
        // write, at most a request timeout before the delete).
        // A grant's cells carry the lease plus the lock-delay (Ttl.held).
        int heldTtl = Ttl.held(config.leaseTime(), config.lockDelay());
        Duration floor = Duration.ofSeconds(heldTtl).plus(config.connectTimeout());
        Optional<Duration> keyRetention = config.option(CassandraLockOptions.KEY_RETENTION)
                .map(v -> config.durationOption(CassandraLockOptions.KEY_RETENTION, floor));
        if (keyRetention.isPresent() && keyRetention.get().compareTo(floor) <= 0) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.KEY_RETENTION + "' ("
                    + DurationText.of(keyRetention.get()) + ") must be longer than the lease's time to live in the"
                    + " store (" + heldTtl + "s: ttl " + DurationText.of(config.leaseTime())
                    + (config.lockDelay().isZero() ? "" : " plus lockDelay " + DurationText.of(config.lockDelay()))
                    + " rounded up to whole seconds, plus 1s) plus connectTimeout ("
                    + DurationText.of(config.connectTimeout())
                    + "): a released cell's tombstone must outlive the cell on every replica, or a replica that missed"
                    + " the release could serve the cell again and block the key until its TTL; give more than "
                    + DurationText.of(floor));
        }
        if (keyRetention.isPresent() && keyRetention.get().getSeconds() >= Ttl.MAX_TTL_SECONDS) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.KEY_RETENTION + "' ("
                    + DurationText.of(keyRetention.get()) + ") must be under 20 years (Cassandra's longest TTL)");
        }
        return new CassandraSettings(
                location,
                consistency,
                serial,
                algorithm,
                pollMin,
                pollMax,
                createSchema,
                fencing,
                timeService.equals("embedded"),
                timePeriod,
                timeMaxLead,
                validity,
                config.connectTimeout(),
                keyRetention,
                floor);
    }

    /**
     * The low-water mark's TTL in seconds: {@code keyRetention}, else the queue table's {@code gc_grace_seconds} (the
     * mark lives as long as the tombstones it lets reads skip), never less than the floor.
     */
    int markTtlSeconds(int queueTableGcGraceSeconds) {
        return keyRetention
                .map(CassandraSettings::wholeSeconds)
                .orElse(Math.max(queueTableGcGraceSeconds, wholeSeconds(keyRetentionFloor) + 1));
    }

    /** The {@code gc_grace_seconds} of the tables {@code createSchema=true} creates. */
    int newTablesGcGraceSeconds() {
        return keyRetention
                .map(CassandraSettings::wholeSeconds)
                .orElse(Math.max(wholeSeconds(DEFAULT_KEY_RETENTION), wholeSeconds(keyRetentionFloor) + 1));
    }

    private static int wholeSeconds(Duration d) {
        return (int) Math.min(Ttl.MAX_TTL_SECONDS, (d.toMillis() + 999) / 1000);
    }
}
