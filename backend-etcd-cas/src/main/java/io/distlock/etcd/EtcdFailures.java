package io.distlock.etcd;

import io.grpc.Status;
import java.util.Locale;
import java.util.Optional;
import javax.net.ssl.SSLException;

/**
 * Says in a user's words why etcd refused a connection: the TLS handshake (certificate not trusted, no TLS on the
 * member's port), authentication, or permission on the prefix. Messages never hold a password: etcd's answers do
 * not echo one, and the options are not quoted.
 */
final class EtcdFailures {

    private EtcdFailures() {}

    /**
     * The cause of a failed open, for the exception's message.
     *
     * @param cause what jetcd or etcd answered
     * @param location the endpoints and prefix connected to
     * @param user the etcd user given, if any
     */
    static String describe(Throwable cause, EtcdLocation location, Optional<String> user) {
        Optional<SSLException> tls = find(cause, SSLException.class);
        if (tls.isPresent()) {
            return tlsFailure(tls.get(), location);
        }
        String text = messages(cause).toLowerCase(Locale.ROOT);
        Status.Code code = EtcdCalls.statusCode(cause);
        if (code == Status.Code.PERMISSION_DENIED || text.contains("permission denied")) {
            return "permission denied on " + location.prefix() + "/ for "
                    + user.map(u -> "etcd user '" + u + "'").orElse("this client's etcd user")
                    + ": grant one of its roles readwrite on the prefix (etcdctl role grant-permission <role> readwrite "
                    + location.prefix() + "/ --prefix=true)";
        }
        if (text.contains("authentication failed")) {
            return "authentication failed for etcd user '" + user.orElse("?")
                    + "': etcd knows no such user, or the password is wrong (options user and password)";
        }
        if (text.contains("user name is empty") || text.contains("invalid auth token")) {
            return "etcd requires authentication: give options user and password (or passwordFile / passwordEnv), or"
                    + " a client certificate (certFile, keyFile) whose common name is an etcd user";
        }
        if (text.contains("http/1") || text.contains("first received frame was not settings")) {
            return "the member did not answer as gRPC over plaintext: if it serves TLS, use etcd+https:// (with"
                    + " caFile) (" + cause + ")";
        }
        // A member speaking the other protocol is found by ProtocolProbe before this.
        return cause.getMessage() + "; is the cluster running and reachable from here?";
    }

    private static String tlsFailure(SSLException e, EtcdLocation location) {
        String text = messages(e).toLowerCase(Locale.ROOT);
        if (text.contains("not an ssl/tls record") || text.contains("unrecognized ssl message")) {
            return "TLS handshake failed: the member at " + location.describeEndpoints()
                    + " does not speak TLS on that port; use etcd:// for a plaintext member (" + e + ")";
        }
        if (text.contains("pkix") || text.contains("certification path") || text.contains("unable to find valid")) {
            return "TLS handshake failed: certificate not trusted: the member's certificate is not signed by an"
                    + " authority in caFile (or, without caFile, the JVM's trust store) (" + e + ")";
        }
        if (text.contains("no subject alternative") || text.contains("no name matching")) {
            return "TLS handshake failed: the member's certificate does not name the host in the URI (" + e + ")";
        }
        if (text.contains("bad_certificate")
                || text.contains("certificate_required")
                || text.contains("certificate_unknown")) {
            return "TLS handshake failed: the member refused this client's certificate, or wants one (options certFile"
                    + " and keyFile, signed by an authority the member trusts) (" + e + ")";
        }
        return "TLS handshake failed: " + e;
    }

    /**
     * What a full etcd means to a locker, and what the operator does about it: etcd answers every write of a member
     * whose database has reached its space quota ({@code --quota-backend-bytes}, 2 GiB by default) with this error and
     * raises its {@code NOSPACE} alarm, after which it takes reads and deletes only. A lock service fills it when etcd
     * keeps every revision (automatic compaction is off by default): each lock and release writes two.
     */
    static final String OUT_OF_SPACE = "etcd's database is full (etcdserver: mvcc: database space exceeded; alarm"
            + " NOSPACE): it takes no write, so no lock, until it is compacted, defragmented and its alarm disarmed"
            + " (etcdctl compaction <revision>; etcdctl defrag; etcdctl alarm disarm); run etcd with"
            + " --auto-compaction-retention so that its history does not fill it again";

    /** Whether etcd refused a write because its database is full (the {@code NOSPACE} alarm). */
    static boolean isOutOfSpace(Throwable cause) {
        return EtcdCalls.statusCode(cause) == Status.Code.RESOURCE_EXHAUSTED
                && messages(cause).contains("database space exceeded");
    }

    /**
     * Whether etcd refused the request's password token as stale: expired (unused for the members'
     * {@code --auth-token-ttl}, 300 s by default: a locker's keep-alives do not count as use), or lost with a member's
     * restart (simple tokens live in the member's memory). etcd checks the token before anything else, so nothing was
     * applied; jetcd, seeing the error, asks for a new token on the next request, which a repeat therefore carries.
     */
    static boolean isStaleToken(Throwable cause) {
        return messages(cause).contains("invalid auth token");
    }

    /** Whether the failure is one a repeat cannot mend: a TLS handshake, authentication or permission refused. */
    static boolean isRefusal(Throwable cause) {
        return find(cause, SSLException.class).isPresent()
                || EtcdCalls.statusCode(cause) == Status.Code.PERMISSION_DENIED
                || EtcdCalls.statusCode(cause) == Status.Code.UNAUTHENTICATED;
    }

    private static <T extends Throwable> Optional<T> find(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return Optional.of(type.cast(t));
            }
        }
        return Optional.empty();
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t).append(' ');
        }
        return all.toString();
    }
}
