package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Redaction;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A stand-alone replica of seed 000's GlobalTime service (section 5.4, Listing 8): updates the GlobalTime cell of a
 * keyspace every period until closed. Lockers run a replica each by default; run this (for example as {@code lockctl
 * time-service --store cassandra://...}) and open lockers with {@code timeService=external} to keep the cell updated
 * from a few dedicated processes instead.
 *
 * <pre>{@code
 * try (TimeService service = TimeService.start("cassandra://10.0.0.1:9042/locks?timePeriod=500ms")) {
 *     ...   // runs in the background
 * }
 * }</pre>
 */
public final class TimeService implements AutoCloseable {

    private final CqlSession session;
    private final GlobalTime time;
    private final ScheduledExecutorService scheduler;

    private TimeService(CqlSession session, GlobalTime time, ScheduledExecutorService scheduler) {
        this.session = session;
        this.time = time;
        this.scheduler = scheduler;
    }

    /**
     * Connects to the keyspace of {@code uri} (the backend's URI; its options {@code localDatacenter}, {@code
     * consistency}, {@code createSchema}, {@code timePeriod}, {@code timeMaxLead}, {@code connectTimeout} and the
     * connection's credentials, TLS and {@code driverConfig} apply,
     * the others are ignored) and starts updating the cell.
     *
     * @throws io.distlock.LockConfigurationException if the URI is not a {@code cassandra://} one, or it or an option is
     *     malformed
     * @throws LockBackendException if the cluster cannot be reached or lacks the tables
     */
    public static TimeService start(String uri) {
        URI full;
        try {
            full = URI.create(Objects.requireNonNull(uri, "uri"));
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException("The time service's URI is malformed: " + Redaction.uri(uri));
        }
        if (!"cassandra".equalsIgnoreCase(full.getScheme())) {
            throw new LockConfigurationException("The time service runs for a Cassandra lock store: give a cassandra://"
                    + " URI, got " + (full.getScheme() == null ? "no scheme" : "scheme '" + full.getScheme() + "'")
                    + " in " + Redaction.uri(uri));
        }
        Map<String, String> options = new LinkedHashMap<>();
        if (full.getRawQuery() != null) {
            for (String pair : full.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    options.put(
                            java.net.URLDecoder.decode(pair.substring(0, eq), java.nio.charset.StandardCharsets.UTF_8),
                            java.net.URLDecoder.decode(
                                    pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
                }
            }
        }
        options.remove("ttl"); // a lockers' option, meaningless here
        String text = full.toString();
        URI bare = full.getRawQuery() == null ? full : URI.create(text.substring(0, text.indexOf('?')));
        BackendConfig probe = new BackendConfig(
                bare, options, Duration.ofSeconds(30), Duration.ofSeconds(10), Ticker.system(), Clock.systemUTC());
        Duration connectTimeout = probe.durationOption("connectTimeout", Duration.ofSeconds(10));
        options.remove("connectTimeout");
        BackendConfig config = new BackendConfig(
                bare, options, Duration.ofSeconds(30), connectTimeout, Ticker.system(), Clock.systemUTC());
        return start(
                CassandraSettings.read(config),
                CassandraClientSettings.read(config),
                config.clock(),
                config.ticker(),
                connectTimeout);
    }

    static TimeService start(
            CassandraSettings settings,
            CassandraClientSettings client,
            Clock clock,
            Ticker ticker,
            Duration connectTimeout) {
        CqlSession session = CassandraConnection.open(settings, client, connectTimeout);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "distlock-cassandra-time-service");
            t.setDaemon(true);
            return t;
        });
        try {
            CassandraConnection.ensureSchema(session, settings);
            CassandraCalls calls = new CassandraCalls(
                    session,
                    settings.location().hosts() + "/" + settings.location().keyspace(),
                    settings.operationTimeout(),
                    ticker);
            GlobalTime time = new GlobalTime(
                    calls,
                    new CassandraStatements(
                            session,
                            settings.location().keyspace(),
                            settings.consistency(),
                            settings.serialConsistency()),
                    clock,
                    ticker,
                    settings.timePeriod(),
                    settings.timeMaxLead(),
                    true);
            time.start(scheduler);
            return new TimeService(session, time, scheduler);
        } catch (RuntimeException e) {
            scheduler.shutdownNow();
            session.close();
            throw e;
        }
    }

    /** The largest GlobalTime value (microseconds since the epoch) this replica has read or written. */
    public long globalTimeMicros() {
        return time.seenMicros();
    }

    /** Stops updating and disconnects. */
    @Override
    public void close() {
        time.stop(scheduler);
        session.close();
    }

    /**
     * Runs a replica until the process is stopped: {@code TimeService <cassandra-uri>}.
     *
     * @param args the backend URI
     */
    public static void main(String[] args) throws InterruptedException {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: TimeService cassandra://host:port[,host:port...]/keyspace");
        }
        TimeService service = start(args[0]);
        Runtime.getRuntime().addShutdownHook(new Thread(service::close, "distlock-time-service-stop"));
        Thread.currentThread().join();
    }
}
