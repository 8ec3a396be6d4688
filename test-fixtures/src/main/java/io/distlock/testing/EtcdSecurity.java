package io.distlock.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * How an {@link EtcdCluster} secures its client port: TLS with a server certificate of a {@link TestPki}, optionally
 * client certificates required ({@code --client-cert-auth}), optionally etcd's authentication (a {@code root} user with
 * the given password, enabled through {@code etcdctl} once the members are healthy). Immutable.
 *
 * <pre>{@code
 * TestPki pki = TestPki.create(dir);
 * @RegisterExtension
 * static final EtcdCluster ETCD = EtcdCluster.builder()
 *         .security(EtcdSecurity.tls(pki).requireClientCertificates().withAuth("root-password"))
 *         .build();
 * }</pre>
 */
public final class EtcdSecurity {

    /** The common name of the certificate {@code etcdctl} presents, and the etcd user it acts as. */
    public static final String ROOT = "root";

    private final TestPki pki;
    private final TestPki.Identity server;
    private final TestPki.Identity root;
    private final boolean clientCertificates;
    private final Optional<String> rootPassword;
    private final OptionalInt authTokenTtlSeconds;

    private EtcdSecurity(
            TestPki pki,
            TestPki.Identity server,
            TestPki.Identity root,
            boolean clientCertificates,
            Optional<String> rootPassword,
            OptionalInt authTokenTtlSeconds) {
        this.pki = pki;
        this.server = server;
        this.root = root;
        this.clientCertificates = clientCertificates;
        this.rootPassword = rootPassword;
        this.authTokenTtlSeconds = authTokenTtlSeconds;
    }

    /** TLS on the client port with a server certificate of {@code pki} (valid for localhost and 127.0.0.1-3). */
    public static EtcdSecurity tls(TestPki pki) {
        Objects.requireNonNull(pki, "pki");
        return new EtcdSecurity(
                pki, pki.server("localhost"), pki.client(ROOT), false, Optional.empty(), OptionalInt.empty());
    }

    /** The same, and clients must present a certificate signed by the authority ({@code --client-cert-auth}). */
    public EtcdSecurity requireClientCertificates() {
        return new EtcdSecurity(pki, server, root, true, rootPassword, authTokenTtlSeconds);
    }

    /** The same, and etcd's authentication on, with a {@code root} user of this password. */
    public EtcdSecurity withAuth(String rootPassword) {
        return new EtcdSecurity(pki, server, root, clientCertificates, Optional.of(rootPassword), authTokenTtlSeconds);
    }

    /**
     * The same, and the members' password tokens expire after {@code seconds} unused ({@code --auth-token-ttl}; etcd's
     * default is 300), so that a test sees a client's token expire.
     *
     * @throws IllegalArgumentException if not positive
     */
    public EtcdSecurity withAuthTokenTtl(int seconds) {
        if (seconds <= 0) {
            throw new IllegalArgumentException("authTokenTtl must be positive, got " + seconds);
        }
        return new EtcdSecurity(pki, server, root, clientCertificates, rootPassword, OptionalInt.of(seconds));
    }

    /** The authority clients trust (PEM). */
    public Path caFile() {
        return pki.caFile();
    }

    /** The authority that signed the members' certificates: clients get theirs with {@link TestPki#client}. */
    public TestPki pki() {
        return pki;
    }

    /** Whether clients must present a certificate. */
    public boolean requiresClientCertificates() {
        return clientCertificates;
    }

    /** The root user's password, when authentication is on. */
    public Optional<String> rootPassword() {
        return rootPassword;
    }

    /** The member's TLS flags. */
    List<String> serverFlags() {
        List<String> flags = new ArrayList<>(List.of(
                "--cert-file",
                server.certFile().toString(),
                "--key-file",
                server.keyFile().toString(),
                "--trusted-ca-file",
                pki.caFile().toString()));
        if (clientCertificates) {
            flags.add("--client-cert-auth");
        }
        authTokenTtlSeconds.ifPresent(ttl -> flags.addAll(List.of("--auth-token-ttl", Integer.toString(ttl))));
        return flags;
    }

    /** {@code etcdctl}'s TLS flags, and its user flag once authentication is enabled ({@code authEnabled}). */
    List<String> etcdctlFlags(boolean authEnabled) {
        List<String> flags = new ArrayList<>(List.of(
                "--cacert",
                pki.caFile().toString(),
                "--cert",
                root.certFile().toString(),
                "--key",
                root.keyFile().toString()));
        if (authEnabled) {
            rootPassword.ifPresent(p -> flags.add("--user=" + ROOT + ":" + p));
        }
        return flags;
    }

    @Override
    public String toString() {
        return "EtcdSecurity[tls" + (clientCertificates ? ", client certificates" : "")
                + (rootPassword.isPresent() ? ", auth" : "")
                + (authTokenTtlSeconds.isPresent()
                        ? ", tokens expire after " + authTokenTtlSeconds.getAsInt() + " s"
                        : "")
                + "]";
    }
}
