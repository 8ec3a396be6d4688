package io.distlock.redis;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * Opens the Redlock backend on masters reached through the application's own Lettuce clients ({@link RedisLockers}).
 * The lock options apply as usual; the connection options do not (the clients already have their hosts, TLS,
 * credentials and database) and are refused. Closing the backend closes the connections it opened, never a client.
 */
final class ApplicationClientProvider implements LockBackendProvider {

    /** A master as the application gave it: how messages name it, and how to reach it. */
    record Target(String name, ApplicationClient connector) {}

    private final String target;
    private final List<Target> masters;

    ApplicationClientProvider(String target, List<Target> masters) {
        this.target = target;
        this.masters = List.copyOf(masters);
    }

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("redis", "redlock");
    }

    /**
     * Connects through the application's clients; blocks until a majority is connected, at most for the connect
     * timeout.
     *
     * @throws LockConfigurationException if a connection option is given, or a lock option is malformed
     * @throws io.distlock.LockBackendException if fewer than a majority could be reached in time, or they refused us
     */
    @Override
    public LockBackend open(BackendConfig config) {
        RedlockSettings settings = RedlockSettings.read(config);
        for (String option : ConnectionSettings.OPTIONS) {
            if (config.option(option).isPresent()) {
                throw new LockConfigurationException("Option '" + option + "' does not apply to a locker on the"
                        + " application's Redis client: the client already has its host, TLS, credentials and database;"
                        + " set them on its RedisURI and ClientOptions");
            }
        }
        config.rejectUnknownOptions(name());
        LongAdder requests = new LongAdder();
        List<Master> opened = new ArrayList<>();
        for (Target t : masters) {
            opened.add(new Master(t.name(), t.connector(), settings, requests));
        }
        return RedisLockBackendProvider.open(
                target, opened.size() / 2 + 1, settings, config, opened, requests, () -> {});
    }

    @Override
    public String toString() {
        return "ApplicationClientProvider[" + target + "]";
    }
}
