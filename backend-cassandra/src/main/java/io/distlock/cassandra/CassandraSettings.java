package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import java.time.Duration;
import java.util.Locale;

/** The backend's options, read and checked from a {@link BackendConfig} (see {@link CassandraOptions}). */
record CassandraSettings(
        CassandraLocation location,
        ConsistencyLevel consistency,
        ConsistencyLevel serialConsistency,
        CassandraOptions.Algorithm algorithm,
        Duration pollMin,
        Duration pollMax,
        boolean createSchema,
        boolean fencing,
        boolean embeddedTimeService,
        Duration timePeriod,
        Duration timeMaxLead,
        LeaseValidity validity,
        Duration operationTimeout) {

    /**
     * Reads the lock options of the backend from {@code config} (the connection's options are {@link
     * CassandraClientSettings}'); does not check for unknown ones.
     */
    static CassandraSettings read(BackendConfig config) {
        return read(config, CassandraLocation.parse(config.uri()));
    }

    /** As {@link #read(BackendConfig)}, at {@code location} instead of the URI's hosts. */
    static CassandraSettings read(BackendConfig config, CassandraLocation location) {
        String level = config.stringOption(CassandraOptions.CONSISTENCY, "QUORUM")
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
                throw new LockConfigurationException("Option '" + CassandraOptions.CONSISTENCY
                        + "' must be QUORUM, LOCAL_QUORUM or ALL (the algorithm needs reads and writes that"
                        + " overlap: R + W > RF), got '" + level + "'");
        }
        String algorithmName =
                config.stringOption(CassandraOptions.ALGORITHM, "queue").trim().toLowerCase(Locale.ROOT);
        CassandraOptions.Algorithm algorithm =
                switch (algorithmName) {
                    case "queue" -> CassandraOptions.Algorithm.QUEUE;
                    case "legacy" -> CassandraOptions.Algorithm.LEGACY;
                    default ->
                        throw new LockConfigurationException("Option '" + CassandraOptions.ALGORITHM
                                + "' must be queue or legacy, got '" + algorithmName + "'");
                };
        Duration pollMin = config.durationOption(CassandraOptions.POLL_MIN, Duration.ofMillis(5));
        Duration pollMax = config.durationOption(CassandraOptions.POLL_MAX, Duration.ofMillis(250));
        if (pollMax.compareTo(pollMin) < 0) {
            throw new LockConfigurationException("Option '" + CassandraOptions.POLL_MAX + "' (" + pollMax
                    + ") must not be shorter than '" + CassandraOptions.POLL_MIN + "' (" + pollMin + ")");
        }
        boolean createSchema = config.booleanOption(CassandraOptions.CREATE_SCHEMA, false);
        boolean fencing = config.booleanOption(CassandraOptions.FENCING, false);
        String timeService = config.stringOption(CassandraOptions.TIME_SERVICE, "embedded")
                .trim()
                .toLowerCase(Locale.ROOT);
        if (!timeService.equals("embedded") && !timeService.equals("external")) {
            throw new LockConfigurationException("Option '" + CassandraOptions.TIME_SERVICE
                    + "' must be embedded or external, got '" + timeService + "'");
        }
        Duration timePeriod = config.durationOption(CassandraOptions.TIME_PERIOD, Duration.ofMillis(500));
        Duration timeMaxLead = config.durationOption(CassandraOptions.TIME_MAX_LEAD, Duration.ofSeconds(1));
        LeaseValidity validity = config.option(CassandraOptions.CLOCK_DRIFT).isPresent()
                ? LeaseValidity.explicit(
                        config.durationOption(CassandraOptions.CLOCK_DRIFT, Duration.ZERO), config.leaseTime())
                : LeaseValidity.byDefault();
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
                config.connectTimeout());
    }
}
