package io.distlock.lockctl;

import java.util.List;
import java.util.Map;

/**
 * The store to use when none is given: the one {@value #VARIABLE} names, else an {@link EmbeddedZooKeeper} for the life
 * of the command. A given URI or peer spec may also name that server with the host {@code embedded} ({@code
 * zk://embedded/bench}, {@code peer:curator://embedded/bench}), to compare targets on one embedded server.
 */
final class DefaultStore implements AutoCloseable {

    /** The host name that stands for the embedded server in a given URI. */
    static final String EMBEDDED_HOST = "://embedded";

    /** The environment variable naming the store of every command given no {@code --store}. */
    static final String VARIABLE = "DISTLOCK_STORE";

    private final EmbeddedZooKeeper server;
    private final String basePath;

    private DefaultStore(EmbeddedZooKeeper server, String basePath) {
        this.server = server;
        this.basePath = basePath;
    }

    /**
     * The store a command uses: {@code given} ({@code --store}) if not null, else {@value #VARIABLE} from {@code env}
     * if set, else null (the embedded default).
     *
     * @throws IllegalArgumentException if {@value #VARIABLE} is set but blank
     */
    static String chosen(String given, Map<String, String> env) {
        if (given != null) {
            return given;
        }
        String variable = env.get(VARIABLE);
        if (variable != null && variable.isBlank()) {
            throw new IllegalArgumentException(VARIABLE + " is set but blank: set it to a lock URI (e.g."
                    + " zk://127.0.0.1:2181/lockctl) or unset it for the embedded ZooKeeper, or give --store");
        }
        return variable;
    }

    /** The stores of a command taking several: {@code given} if not empty, else {@value #VARIABLE} alone if set. */
    static List<String> chosen(List<String> given, Map<String, String> env) {
        if (!given.isEmpty()) {
            return given;
        }
        String variable = chosen((String) null, env);
        return variable == null ? given : List.of(variable);
    }

    /** Starts an embedded ZooKeeper if {@code given} is empty; locks go under {@code basePath}. */
    static DefaultStore unless(List<String> given, String basePath) throws Exception {
        boolean embedded = given.isEmpty() || given.stream().anyMatch(DefaultStore::namesEmbedded);
        return new DefaultStore(embedded ? EmbeddedZooKeeper.start() : null, basePath);
    }

    /** Starts an embedded ZooKeeper if {@code given} is null. */
    static DefaultStore unless(String given, String basePath) throws Exception {
        return unless(given == null ? List.of() : List.of(given), basePath);
    }

    /** {@code given} with the embedded server's address in place of the host {@code embedded}; else its URI. */
    List<String> uris(List<String> given) {
        if (given.isEmpty()) {
            return List.of(server.uri(basePath));
        }
        return given.stream().map(this::resolve).toList();
    }

    /** {@code given} with the embedded server's address in place of the host {@code embedded}; if null, its URI. */
    String uri(String given) {
        return given == null ? server.uri(basePath) : resolve(given);
    }

    private String resolve(String given) {
        if (!namesEmbedded(given)) {
            return given;
        }
        return given.replaceFirst(java.util.regex.Pattern.quote(EMBEDDED_HOST) + "(:\\d+)?", "://" + server.address());
    }

    /** Whether {@code uri} names the embedded server by the host {@code embedded}. */
    static boolean namesEmbedded(String uri) {
        return uri.contains(EMBEDDED_HOST + "/")
                || uri.endsWith(EMBEDDED_HOST)
                || uri.contains(EMBEDDED_HOST + "?")
                || uri.contains(EMBEDDED_HOST + ":");
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
