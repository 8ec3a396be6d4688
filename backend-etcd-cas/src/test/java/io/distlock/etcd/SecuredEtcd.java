package io.distlock.etcd;

import io.distlock.testing.EtcdCluster;
import io.distlock.testing.EtcdSecurity;
import io.distlock.testing.ServerNode;
import io.distlock.testing.TestPki;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.grpc.netty.GrpcSslContexts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;

/**
 * A secured etcd for tests, as production runs it: TLS only, client certificates required ({@code
 * --client-cert-auth}), authentication on, and a {@value #LOCKER} user whose role may read and write one prefix.
 * Certificates and passwords are made by the run.
 */
final class SecuredEtcd {

    /** The locker's etcd user, also the common name of its client certificate. */
    static final String LOCKER = "locker";

    final TestPki pki;
    final EtcdCluster etcd;
    final String rootPassword = "root-" + UUID.randomUUID();
    final String lockerPassword = "pw-" + UUID.randomUUID();

    private SecuredEtcd(String name, UnaryOperator<EtcdSecurity> more) {
        this.pki = TestPki.create(dir(name));
        this.etcd = EtcdCluster.builder()
                .security(more.apply(
                        EtcdSecurity.tls(pki).requireClientCertificates().withAuth(rootPassword)))
                .build();
    }

    /** A cluster not started yet: register {@link #etcd} as an extension, then call {@link #addLocker}. */
    static SecuredEtcd create(String name) {
        return new SecuredEtcd(name, UnaryOperator.identity());
    }

    /** {@link #create}, its security adjusted by {@code more} (e.g. a short token lifetime). */
    static SecuredEtcd create(String name, UnaryOperator<EtcdSecurity> more) {
        return new SecuredEtcd(name, more);
    }

    /** A fresh directory under {@code target/} for certificates and password files. */
    static Path dir(String name) {
        return Path.of("target", "secured-etcd", name + "-" + UUID.randomUUID()).toAbsolutePath();
    }

    /** Adds the locker's user, its role allowed {@code readwrite} on every key under {@code prefix}. */
    void addLocker(String prefix) {
        etcd.addUser(LOCKER, lockerPassword, prefix + "/");
    }

    /** A file holding {@code password} on its first line. */
    Path passwordFile(String password) {
        try {
            Path file = Files.createTempFile(Files.createDirectories(dir("passwords")), "pw", ".txt");
            Files.writeString(file, password + "\n");
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code etcd+https://<members>/<prefix>}, without options. */
    String baseUri(String prefix) {
        return "etcd+https://" + etcd.nodes().stream().map(ServerNode::endpoint).collect(Collectors.joining(","))
                + prefix;
    }

    /**
     * The secured URI of the locker: the authority to trust, its client certificate, its user, and its password by
     * file, so that the URI itself carries no secret.
     */
    String lockerUri(String prefix, EtcdLockMode mode) {
        TestPki.Identity client = pki.client(LOCKER);
        return baseUri(prefix) + "?mode=" + mode.optionValue() + "&caFile=" + pki.caFile() + "&certFile="
                + client.certFile() + "&keyFile=" + client.keyFile() + "&user=" + LOCKER + "&passwordFile="
                + passwordFile(lockerPassword);
    }

    /** A jetcd client as an application configures one: TLS with its certificate, and a user. */
    Client client(String user, String password) {
        TestPki.Identity identity = pki.client(user);
        try {
            return Client.builder()
                    .endpoints(etcd.clientEndpoints().toArray(String[]::new))
                    .sslContext(GrpcSslContexts.forClient()
                            .trustManager(pki.caFile().toFile())
                            .keyManager(
                                    identity.certFile().toFile(),
                                    identity.keyFile().toFile())
                            .build())
                    .user(ByteSequence.from(user, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password, StandardCharsets.UTF_8))
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A client as {@code root}, to look at what is in the store. */
    Client rootClient() {
        return client(EtcdSecurity.ROOT, rootPassword);
    }

    /** Every key under {@code prefix}, read as root. */
    List<String> keysUnder(Client root, String prefix) throws Exception {
        return root
                .getKVClient()
                .get(
                        ByteSequence.from(prefix + "/", StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).withKeysOnly(true).build())
                .get(10, TimeUnit.SECONDS)
                .getKvs()
                .stream()
                .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                .toList();
    }

    /** How many leases etcd has ({@code etcdctl lease list} as root: jetcd does not list leases). */
    int leases() {
        String output = etcd.etcdctl("lease", "list");
        java.util.regex.Matcher found =
                java.util.regex.Pattern.compile("found (\\d+) leases").matcher(output);
        if (!found.find()) {
            throw new IllegalStateException("Unexpected output of etcdctl lease list: " + output);
        }
        return Integer.parseInt(found.group(1));
    }
}
