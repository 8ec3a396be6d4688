package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.Deadline;
import io.distlock.spi.HostList;
import io.distlock.spi.TlsSettings;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.common.SSLContextAndOptions;
import org.apache.zookeeper.common.X509Exception;

/**
 * TLS to ZooKeeper's secure client port, through the ZooKeeper client's own settings ({@code zookeeper.client.secure},
 * the Netty socket, {@code zookeeper.ssl.*} with PEM files) in a {@link ZKClientConfig} of this client alone: no
 * system property is set, so other clients in the process are not changed.
 *
 * <p>ZooKeeper reads a PEM key store from one file holding the key and its certificate chain; for mutual TLS the
 * {@code keyFile} and {@code certFile} are joined into such a file, readable by this user only, in a directory of its
 * own, deleted when the backend closes.
 */
final class ZkTls implements AutoCloseable {

    private static final String PEM = "PEM";

    private final TlsSettings settings;
    private final ZKClientConfig clientConfig;
    private final Path keyStoreDir;

    private ZkTls(TlsSettings settings, ZKClientConfig clientConfig, Path keyStoreDir) {
        this.settings = settings;
        this.clientConfig = clientConfig;
        this.keyStoreDir = keyStoreDir;
    }

    /**
     * The client settings for {@code settings}.
     *
     * @throws LockConfigurationException if the joined key store cannot be written
     */
    static ZkTls create(TlsSettings settings) {
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
        Path dir = null;
        try (ClientX509Util x509 = new ClientX509Util()) {
            config.setProperty(x509.getSslHostnameVerificationEnabledProperty(), String.valueOf(settings.verifyHost()));
            // ZKClientConfig copies every zookeeper.* system property, which other clients in the JVM may set for
            // themselves. FIPS mode off drops the host-name check of a client that trusts the JVM's store (no caFile),
            // and a context supplier would replace this client's trust and keys: neither is taken from there.
            config.setProperty(x509.getFipsModeProperty(), "true");
            config.setProperty(x509.getSslContextSupplierClassProperty(), null);
            config.setProperty(x509.getSslTruststorePasswdPathProperty(), null);
            config.setProperty(x509.getSslKeystorePasswdPathProperty(), null);
            // Every key and trust store setting is set here, so that none comes from a zookeeper.ssl.* system property.
            config.setProperty(
                    x509.getSslTruststoreLocationProperty(),
                    settings.caFile().map(Path::toString).orElse(""));
            config.setProperty(x509.getSslTruststoreTypeProperty(), PEM);
            config.setProperty(x509.getSslTruststorePasswdProperty(), "");
            config.setProperty(x509.getSslKeystoreLocationProperty(), "");
            config.setProperty(x509.getSslKeystoreTypeProperty(), PEM);
            config.setProperty(x509.getSslKeystorePasswdProperty(), "");
            if (settings.mutual()) {
                dir = posix()
                        ? Files.createTempDirectory(
                                "distlock-zookeeper-tls-",
                                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))
                        : Files.createTempDirectory("distlock-zookeeper-tls-");
                Path keyStore = dir.resolve("client.pem");
                try (OutputStream out = Files.newOutputStream(keyStore)) {
                    out.write(Files.readAllBytes(settings.keyFile().get()));
                    out.write('\n');
                    out.write(Files.readAllBytes(settings.certFile().get()));
                }
                config.setProperty(x509.getSslKeystoreLocationProperty(), keyStore.toString());
            }
            return new ZkTls(settings, config, dir);
        } catch (IOException e) {
            deleteQuietly(dir);
            throw new LockConfigurationException(
                    "Cannot prepare the client key store from options '"
                            + TlsSettings.KEY_FILE + "' and '" + TlsSettings.CERT_FILE + "' ("
                            + settings.keyFile().orElse(null)
                            + ", " + settings.certFile().orElse(null) + "): " + e,
                    e);
        }
    }

    /** The ZooKeeper client's configuration, for Curator's {@code zkClientConfig}. */
    ZKClientConfig clientConfig() {
        return clientConfig;
    }

    /**
     * Makes one TLS handshake with the ZooKeeper client's own TLS context, so that a certificate problem is reported
     * at once and by name: the ZooKeeper client only logs it and tries again until the connect timeout. Servers that
     * refuse the connection are skipped (the client's connection attempt reports them); the first handshake that
     * completes or fails on TLS ends the check.
     *
     * @throws LockBackendException naming the cause if a handshake fails on TLS: the server's certificate is not
     *     trusted, does not name the host, or the server spoke no TLS
     */
    void checkHandshake(HostList hosts, Deadline deadline) {
        SSLContextAndOptions context;
        try (ClientX509Util x509 = new ClientX509Util()) {
            context = x509.createSSLContextAndOptions(clientConfig);
        } catch (X509Exception.SSLContextException e) {
            throw new LockConfigurationException(
                    "Cannot set up TLS from the options (" + describeFiles() + "): " + rootMessage(e), e);
        }
        for (HostList.Address address : hosts.addresses()) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline.remainingNanos());
            if (remainingMs <= 0) {
                return;
            }
            try (SSLSocket socket = context.createSSLSocket()) {
                if (settings.verifyHost()) {
                    // ZooKeeper's plain sockets check no host name (its Netty client does, in FIPS mode, pinned in
                    // create): a certificate for another name is refused here, by name, instead of at the timeout.
                    SSLParameters parameters = socket.getSSLParameters();
                    parameters.setEndpointIdentificationAlgorithm("HTTPS");
                    socket.setSSLParameters(parameters);
                }
                socket.connect(new InetSocketAddress(address.host(), address.port()), (int) remainingMs);
                socket.setSoTimeout((int) Math.max(1, remainingMs));
                socket.startHandshake();
                return;
            } catch (SSLException e) {
                throw new LockBackendException(
                        "TLS handshake with ZooKeeper at " + address + " failed: " + cause(e) + " (" + rootMessage(e)
                                + ")",
                        e);
            } catch (IOException e) {
                // refused or timed out: not a TLS problem; the next server, or the client's own attempt, tells
            }
        }
    }

    private String cause(SSLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CertPathBuilderException
                    || (t.getMessage() != null && t.getMessage().contains("PKIX path"))) {
                return "the server's certificate is not trusted (option " + TlsSettings.CA_FILE
                        + " names the certificate authorities to trust; "
                        + settings.caFile().map(p -> "now " + p).orElse("now the JVM's trust store") + ")";
            }
            if (t instanceof CertificateException) {
                return "the server's certificate was refused: " + t.getMessage() + " (options " + TlsSettings.CA_FILE
                        + ", " + TlsSettings.VERIFY_HOST + ")";
            }
        }
        String message = String.valueOf(e.getMessage());
        if (message.contains("Remote host terminated")
                || message.contains("Unsupported or unrecognized")
                || message.contains("plaintext")) {
            return "the server does not speak TLS on this port; is it ZooKeeper's secureClientPort?";
        }
        return "the TLS handshake was refused (" + describeFiles() + ")";
    }

    private String describeFiles() {
        return TlsSettings.CA_FILE + "=" + settings.caFile().map(Path::toString).orElse("(JVM trust store)")
                + (settings.mutual()
                        ? ", " + TlsSettings.CERT_FILE + "="
                                + settings.certFile().get() + ", " + TlsSettings.KEY_FILE + "="
                                + settings.keyFile().get()
                        : "");
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    /** Deletes the joined key store, if one was written. */
    @Override
    public void close() {
        deleteQuietly(keyStoreDir);
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try {
            Files.deleteIfExists(dir.resolve("client.pem"));
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory; nothing else to do
        }
    }

    private static boolean posix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }
}
