package io.distlock.kit;

import java.util.Objects;
import java.util.Optional;

/**
 * Whether worker processes (separate JVMs on this host) can reach the store under test, and by which URI. Returned
 * by {@link LockerFixture#multiProcessSupport()}.
 */
public final class MultiProcessSupport {

    private final Optional<String> uri;
    private final String reason;

    private MultiProcessSupport(Optional<String> uri, String reason) {
        this.uri = uri;
        this.reason = reason;
    }

    /**
     * Workers open their lockers with {@code uri} (without {@code ttl}; the kit adds it). The backend's module must
     * be on the test classpath, which the workers inherit.
     */
    public static MultiProcessSupport uri(String uri) {
        return new MultiProcessSupport(Optional.of(Objects.requireNonNull(uri, "uri")), "");
    }

    /** Other processes cannot reach the store; the multi-process tests are skipped with {@code reason}. */
    public static MultiProcessSupport unsupported(String reason) {
        return new MultiProcessSupport(Optional.empty(), Objects.requireNonNull(reason, "reason"));
    }

    /** The URI workers open; empty if unsupported. */
    public Optional<String> workerUri() {
        return uri;
    }

    /** Why workers cannot reach the store; empty text if they can. */
    public String reason() {
        return reason;
    }
}
