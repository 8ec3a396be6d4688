package io.distlock.lockctl;

import java.util.List;

/** The store to use when none is given: an {@link EmbeddedZooKeeper} for the life of the command. */
final class DefaultStore implements AutoCloseable {

    private final EmbeddedZooKeeper server;
    private final String basePath;

    private DefaultStore(EmbeddedZooKeeper server, String basePath) {
        this.server = server;
        this.basePath = basePath;
    }

    /** Starts an embedded ZooKeeper if {@code given} is empty; locks go under {@code basePath}. */
    static DefaultStore unless(List<String> given, String basePath) throws Exception {
        return new DefaultStore(given.isEmpty() ? EmbeddedZooKeeper.start() : null, basePath);
    }

    /** Starts an embedded ZooKeeper if {@code given} is null. */
    static DefaultStore unless(String given, String basePath) throws Exception {
        return unless(given == null ? List.of() : List.of(given), basePath);
    }

    /** {@code given}, or the embedded server's URI if none was given. */
    List<String> uris(List<String> given) {
        return server == null ? given : List.of(server.uri(basePath));
    }

    /** {@code given}, or the embedded server's URI if it is null. */
    String uri(String given) {
        return server == null ? given : server.uri(basePath);
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
