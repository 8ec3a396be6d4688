package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.auth.AuthenticationException;
import com.datastax.oss.driver.api.core.connection.ClosedConnectionException;
import io.distlock.LockBackendException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLException;

/**
 * Turns the driver's failure to open a session into a message that names the cause: authentication failed, the
 * server's certificate not trusted or not naming the host, the client certificate refused, a plaintext client at a
 * TLS-only port. The driver's messages carry no password, and neither do these.
 */
final class CassandraFailures {

    /** Added to a plaintext connection's failure: the usual reason a node hangs up or does not answer. */
    static final String PLAINTEXT_HINT =
            " (connected without TLS: if the nodes require client encryption, add option tls=true)";

    private CassandraFailures() {}

    /**
     * That the location's keyspace does not exist, and how to create it: with a replication factor that the nodes can
     * answer for (a lock asks a quorum of its key's replicas, so 3 on a cluster of one node never answers).
     */
    static String noKeyspace(CassandraLocation location) {
        String keyspace = location.keyspace();
        return "Keyspace '" + keyspace + "' does not exist in Cassandra at " + location.hosts()
                + "; create it first, e.g. CREATE KEYSPACE " + keyspace
                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3} (3 replicas of each key on"
                + " a cluster of three nodes or more; on fewer, as many as there are nodes: a lock asks a quorum of"
                + " its key's replicas)";
    }

    /** The failure to throw for {@code cause}, the driver's reason that the session did not open. */
    static LockBackendException describe(CassandraLocation location, CassandraClientSettings client, Throwable cause) {
        List<Throwable> errors = errors(cause);
        String at = "Cassandra at " + location.hosts();
        for (Throwable error : errors) {
            AuthenticationException auth = find(error, AuthenticationException.class);
            if (auth != null) {
                String reason = client.user().isEmpty()
                        ? "the cluster requires authentication: give options user and password (or passwordFile,"
                                + " passwordEnv)"
                        : "role '" + client.user().get() + "' was refused (wrong password or unknown role): "
                                + auth.getMessage();
                return new LockBackendException("Authentication failed at " + at + ": " + reason, cause);
            }
        }
        for (Throwable error : errors) {
            SSLException tls = find(error, SSLException.class);
            if (tls != null) {
                return new LockBackendException(
                        "TLS handshake with " + at + " failed: " + tlsReason(tls) + " (" + tls.getMessage() + ")",
                        cause);
            }
        }
        if (client.tls().isEmpty()) {
            for (Throwable error : errors) {
                if (find(error, ClosedConnectionException.class) != null) {
                    return new LockBackendException(
                            at + " closed the connection during the handshake" + PLAINTEXT_HINT + ": " + error, cause);
                }
            }
        }
        return new LockBackendException("Could not connect to " + at + ": " + cause, cause);
    }

    private static String tlsReason(SSLException e) {
        String text = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            text += " " + String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
        }
        if (text.contains("subject alternative") || text.contains("no name matching")) {
            return "the server's certificate does not name the host connected to (check the URI's hosts, or"
                    + " verifyHost=false)";
        }
        if (text.contains("pkix") || text.contains("certification path")) {
            return "certificate not trusted: the server's certificate is not signed by an authority in caFile (or"
                    + " the JVM's trust store)";
        }
        if (text.contains("bad_certificate") || text.contains("certificate_required") || text.contains("unknown_ca")) {
            return "the server refused the client certificate (certFile/keyFile missing or not signed by an authority"
                    + " the server trusts)";
        }
        return "TLS error";
    }

    /** The per-node errors of an {@link AllNodesFailedException}, or {@code cause} alone. */
    private static List<Throwable> errors(Throwable cause) {
        List<Throwable> all = new ArrayList<>();
        if (cause instanceof AllNodesFailedException failed) {
            failed.getAllErrors().values().forEach(all::addAll);
        }
        all.add(cause);
        return all;
    }

    private static <T extends Throwable> T find(Throwable error, Class<T> type) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
