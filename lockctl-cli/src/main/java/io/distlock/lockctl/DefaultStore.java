package io.distlock.lockctl;

import java.util.List;
import java.util.Map;

/**
 * The store to use when none is given: the one {@value #VARIABLE} names, else an {@link EmbeddedZooKeeper} for the life
 * of the command. A given URI or peer spec may also name that server with the host {@code embedded} ({@code
 * zk://embedded/bench}, {@code peer:curator://embedded/bench}), to compare targets on one embedded server, or with the
 * host {@code process} a {@link ProcessZooKeeper}, a server in a child JVM of its own started for the command ({@code
 * zk://process/bench}, {@code peer:curator://process/bench}: every spec naming it names the one server).
 */
final class DefaultStore implements AutoCloseable {

    /** The host name that stands for the embedded server in a given URI. */
    static final String EMBEDDED_HOST = "://embedded";

    /** The host name that stands for the server in a process of its own in a given URI. */
    static final String PROCESS_HOST = "://process";

    /** The environment variable naming the store of every command given no {@code --store}. */
    static final String VARIABLE = "DISTLOCK_STORE";

    private final EmbeddedZooKeeper server;
    private final ProcessZooKeeper process;
    private final String basePath;

    private DefaultStore(EmbeddedZooKeeper server, ProcessZooKeeper process, String basePath) {
        this.server = server;
        this.process = process;
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

    /**
     * Starts an embedded ZooKeeper if {@code given} is empty or names it, and a ZooKeeper in a process of its own if
     * {@code given} names it; locks go under {@code basePath}.
     */
    static DefaultStore unless(List<String> given, String basePath) throws Exception {
        boolean embedded = given.isEmpty() || given.stream().anyMatch(DefaultStore::namesEmbedded);
        boolean ownProcess = given.stream().anyMatch(DefaultStore::namesProcess);
        ProcessZooKeeper process = ownProcess ? ProcessZooKeeper.start() : null;
        try {
            return new DefaultStore(embedded ? EmbeddedZooKeeper.start() : null, process, basePath);
        } catch (Exception | Error e) {
            if (process != null) {
                process.close();
            }
            throw e;
        }
    }

    /** Starts an embedded ZooKeeper if {@code given} is null. */
    static DefaultStore unless(String given, String basePath) throws Exception {
        return unless(given == null ? List.of() : List.of(given), basePath);
    }

    /**
     * {@code given} with the servers' addresses in place of the hosts {@code embedded} and {@code process}; if empty,
     * the embedded server's URI.
     */
    List<String> uris(List<String> given) {
        if (given.isEmpty()) {
            return List.of(server.uri(basePath));
        }
        return given.stream().map(this::resolve).toList();
    }

    /**
     * {@code given} with the servers' addresses in place of the hosts {@code embedded} and {@code process}; if null,
     * the embedded server's URI.
     */
    String uri(String given) {
        return given == null ? server.uri(basePath) : resolve(given);
    }

    private String resolve(String given) {
        if (namesEmbedded(given)) {
            return replaceHost(given, EMBEDDED_HOST, server.address());
        }
        if (namesProcess(given)) {
            return replaceHost(given, PROCESS_HOST, process.address());
        }
        return given;
    }

    private static String replaceHost(String given, String host, String address) {
        return given.replaceFirst(java.util.regex.Pattern.quote(host) + "(:\\d+)?", "://" + address);
    }

    /** Whether {@code uri} names the embedded server by the host {@code embedded}. */
    static boolean namesEmbedded(String uri) {
        return namesHost(uri, EMBEDDED_HOST);
    }

    /** Whether {@code uri} names the server in a process of its own by the host {@code process}. */
    static boolean namesProcess(String uri) {
        return namesHost(uri, PROCESS_HOST);
    }

    private static boolean namesHost(String uri, String host) {
        return uri.contains(host + "/") || uri.endsWith(host) || uri.contains(host + "?") || uri.contains(host + ":");
    }

    @Override
    public void close() {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            if (process != null) {
                process.close();
            }
        }
    }
}
