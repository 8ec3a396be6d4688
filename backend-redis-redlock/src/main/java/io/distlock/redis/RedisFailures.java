package io.distlock.redis;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import javax.net.ssl.SSLException;

/**
 * Names why a master refused us, for messages: authentication failed, permission denied on the key prefix,
 * certificate not trusted, TLS spoken to a plaintext port or the reverse. Such refusals do not pass by waiting, so
 * opening reports them first. Messages carry the server's or TLS library's words, never a password.
 */
final class RedisFailures {

    /** Why a replica cannot be one of a locker's masters, and what to give instead. */
    static final String READ_ONLY_REPLICA = "a read-only replica, not a master: locks are written, so give the masters'"
            + " addresses (after a failover, the new master's)";

    /** Why a node of a Redis Cluster is not a master for distlock, and what to give instead. */
    static final String CLUSTER_NODE = "a node of a Redis Cluster, which serves only its own hash slots: distlock"
            + " locks on standalone masters (redis://, or redlock:// for several), each holding every key";

    private RedisFailures() {}

    /** Whether {@code failure} is a replica's refusal of a write ({@code READONLY}). */
    static boolean isReadOnly(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().startsWith("READONLY")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code failure} is a master's refusal that no wait outlasts: its user's authentication or permission
     * ({@code WRONGPASS}, {@code NOAUTH}, {@code NOPERM}), or a node of a Redis Cluster ({@code MOVED}, {@code ASK},
     * {@code CLUSTERDOWN}: distlock never locks there). A replica's {@code READONLY} is not one (a failover
     * promotes it, or moves the master's address to a new server), nor a full server's "max number of clients".
     */
    static boolean lasts(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage() == null ? "" : t.getMessage();
            String upper = message.toUpperCase(Locale.ROOT);
            for (String prefix : LASTING) {
                if (upper.startsWith(prefix)) {
                    return true;
                }
            }
            if (message.contains("can't run this command")) {
                return true;
            }
        }
        return false;
    }

    /** How the server's errors of {@link #lasts} begin. */
    private static final List<String> LASTING =
            List.of("WRONGPASS", "NOAUTH", "NOPERM", "MOVED ", "ASK ", "CLUSTERDOWN");

    /**
     * Why {@code failure} happened, if it is a refusal: a sentence that names the cause and the options to check.
     *
     * @param keyPrefix the locker's key prefix, named when the ACL user may not touch its keys
     * @param connecting whether the failure ended a connection attempt (a connection closed or reset then is a
     *     server that does not speak our protocol on that port, not an outage)
     */
    static Optional<String> describe(Throwable failure, String keyPrefix, boolean connecting) {
        String sentinelNote = mentionsSentinel(failure) ? SENTINEL_CREDENTIALS : "";
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CompletionException || t instanceof ExecutionException) {
                continue;
            }
            String message = t.getMessage() == null ? "" : t.getMessage();
            String upper = message.toUpperCase(Locale.ROOT);
            if (upper.startsWith("WRONGPASS")) {
                return Optional.of("authentication failed: unknown user or wrong password (" + message.trim()
                        + "); check options 'user' and 'password'" + sentinelNote);
            }
            if (upper.startsWith("NOAUTH")) {
                return Optional.of("authentication failed: the server asks for credentials (" + message.trim()
                        + "); give options 'password' and, for an ACL user, 'user'" + sentinelNote);
            }
            if (message.startsWith("Cannot provide redisAddress using sentinel for masterId ")) {
                return Optional.of("the sentinels watch no master of that name (" + message.trim() + "): check the"
                        + " URI's path against the names they watch (SENTINEL MASTERS)");
            }
            if (upper.startsWith("MOVED ") || upper.startsWith("ASK ") || upper.startsWith("CLUSTERDOWN")) {
                return Optional.of(CLUSTER_NODE + " (" + message.trim() + ")");
            }
            if (upper.startsWith("ERR MAX NUMBER OF CLIENTS")) {
                return Optional.of("the server takes no more clients: it has as many as its maxclients allows ("
                        + message.trim() + "); raise maxclients there, or find who holds so many connections");
            }
            if (upper.startsWith("READONLY")) {
                return Optional.of(READ_ONLY_REPLICA + " (" + message.trim() + ")");
            }
            if (upper.startsWith("NOPERM") || message.contains("can't run this command")) {
                return Optional.of("permission denied on " + keyPrefix + "* (" + message.trim()
                        + "): the ACL user needs keys ~" + keyPrefix + "*, channel &" + keyPrefix
                        + "released and the commands SET, EVALSHA, EVAL, GET, DEL, PEXPIRE, PUBLISH, SUBSCRIBE (read-write"
                        + " locks and semaphores: TIME, ZADD, ZCARD, ZRANGE, ZREM, ZREMRANGEBYSCORE, ZSCORE besides)");
            }
            if (t instanceof io.netty.handler.ssl.NotSslRecordException) {
                return Optional.of("the server does not speak TLS on this port (" + message.trim()
                        + "); connect without TLS or to its TLS port");
            }
            if (t instanceof SSLException) {
                return Optional.of(tls(message));
            }
            if (connecting && closedDuringHandshake(upper)) {
                // On the way to a sentinel that asks for a password, Lettuce reports its NOAUTH or, by timing, this
                return Optional.of("the server closed the connection during the handshake (" + message.trim()
                        + "); if this is a TLS port, connect with rediss:// or tls=true"
                        + (sentinelNote.isEmpty()
                                ? ""
                                : "; if the sentinels ask for a password" + SENTINEL_CREDENTIALS));
            }
        }
        return Optional.empty();
    }

    /** Said of an authentication failure met on the way to a sentinel, which has credentials of its own. */
    private static final String SENTINEL_CREDENTIALS =
            " (for the sentinels: options 'sentinelPassword' and 'sentinelUser')";

    /** Whether a failure met on the way to a sentinel (Lettuce names the sentinel in its wrapper). */
    private static boolean mentionsSentinel(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("Sentinel")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a connection attempt ended because the server closed the channel before the handshake was done: read as
     * such, or (Lettuce's words when the channel closed before its handshake handler was found in the pipeline) as
     * "RedisHandshakeHandler not registered". Which one a TLS port gives a plaintext client depends on timing.
     */
    private static boolean closedDuringHandshake(String upper) {
        return upper.contains("CONNECTION CLOSED PREMATURELY")
                || upper.contains("CONNECTION RESET")
                || upper.contains("HANDSHAKEHANDLER NOT REGISTERED");
    }

    private static String tls(String message) {
        String lower = message.toLowerCase(Locale.ROOT);
        if (lower.contains("pkix") || lower.contains("unable to find valid certification path")) {
            return "certificate not trusted: the server's certificate is not signed by an authority of option"
                    + " 'caFile' (or of the JVM's trust store) (" + message + ")";
        }
        if (lower.contains("subject alternative") || lower.contains("hostname") || lower.contains("no name matching")) {
            return "certificate not trusted: it does not name the host connected to (" + message
                    + "); connect by a name it carries, or set verifyHost=false";
        }
        if (lower.contains("certificate_required")
                || lower.contains("bad_certificate")
                || lower.contains("unknown_ca")) {
            return "the server refused our client certificate (" + message
                    + "); give options 'certFile' and 'keyFile' signed by an authority it trusts";
        }
        return "TLS handshake failed (" + message + ")";
    }
}
