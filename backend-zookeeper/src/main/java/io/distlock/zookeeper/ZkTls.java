package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.Deadline;
import io.distlock.toolkit.HostList;
import io.distlock.toolkit.TlsSettings;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertPathBuilderException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.common.SSLContextAndOptions;
import org.apache.zookeeper.common.X509Exception;
import org.apache.zookeeper.util.PemReader;

/**
 * TLS to ZooKeeper's secure client port, through the ZooKeeper client's own settings ({@code zookeeper.client.secure},
 * the Netty socket, {@code zookeeper.ssl.*} with PEM files) in a {@link ZKClientConfig} of this client alone: no
 * system property is set, so other clients in the process are not changed.
 *
 * <p>ZooKeeper's client reads its key from a key store file at every connection (its Netty client takes no {@code
 * SSLContext} supplier in 3.9), so for mutual TLS the {@code keyFile} and {@code certFile} are copied into a PKCS#12
 * key store encrypted with a random password that exists only in this client's configuration, in memory (no system
 * property): the key is never on disk in the clear. The file is readable by this user only, in a directory of its own
 * named after this process, deleted when the backend closes or the JVM exits; one left by a killed process is
 * deleted by the next mutual-TLS locker of this user.
 */
final class ZkTls implements AutoCloseable {

    private static final String PEM = "PEM";
    private static final String PKCS12 = "PKCS12";
    private static final String DIR_PREFIX = "distlock-zookeeper-tls-";
    private static final String KEY_STORE_FILE = "client.p12";
    private static final FileAttribute<?> OWNER_ONLY_DIR =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final FileAttribute<?> OWNER_ONLY_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Optional<String> PID_NAMESPACE = pidNamespace();

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
            config.setProperty(x509.getSslKeystoreTypeProperty(), PKCS12);
            // cleared, then set once: ZKConfig logs (at debug) the old and new value of a property set twice
            config.setProperty(x509.getSslKeystorePasswdProperty(), null);
            config.setProperty(x509.getSslKeystoreLocationProperty(), "");
            if (settings.mutual()) {
                sweepLeftOvers();
                dir = posix()
                        ? Files.createTempDirectory(
                                dirPrefix(ProcessHandle.current().pid()), OWNER_ONLY_DIR)
                        : Files.createTempDirectory(
                                dirPrefix(ProcessHandle.current().pid()));
                dir.toFile().deleteOnExit(); // registered first, so deleted after the file in it
                char[] password = randomPassword();
                Path keyStore = writeKeyStore(dir, settings, password);
                config.setProperty(x509.getSslKeystoreLocationProperty(), keyStore.toString());
                config.setProperty(x509.getSslKeystorePasswdProperty(), new String(password));
            } else {
                config.setProperty(x509.getSslKeystorePasswdProperty(), "");
            }
            return new ZkTls(settings, config, dir);
        } catch (IOException | GeneralSecurityException e) {
            deleteQuietly(dir);
            throw new LockConfigurationException(
                    "Cannot prepare the client key store from options '"
                            + TlsSettings.KEY_FILE + "' and '" + TlsSettings.CERT_FILE + "' ("
                            + settings.keyFile().orElse(null)
                            + ", " + settings.certFile().orElse(null) + "): " + e,
                    e);
        }
    }

    /**
     * Writes the key and its certificate chain, read with ZooKeeper's own PEM reader, into a PKCS#12 key store
     * encrypted with {@code password}, readable by this user only, deleted at the JVM's exit if not before.
     */
    private static Path writeKeyStore(Path dir, TlsSettings settings, char[] password)
            throws IOException, GeneralSecurityException {
        PrivateKey key = PemReader.loadPrivateKey(settings.keyFile().get().toFile(), Optional.empty());
        List<X509Certificate> chain =
                PemReader.readCertificateChain(settings.certFile().get().toFile());
        if (chain.isEmpty()) {
            throw new IOException("no certificate in " + settings.certFile().get());
        }
        KeyStore store = KeyStore.getInstance(PKCS12);
        store.load(null, null);
        store.setKeyEntry("client", key, password, chain.toArray(new Certificate[0]));
        Path file = dir.resolve(KEY_STORE_FILE);
        if (posix()) {
            Files.createFile(file, OWNER_ONLY_FILE);
        } else {
            Files.createFile(file);
        }
        file.toFile().deleteOnExit();
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, password);
        }
        return file;
    }

    /** 192 random bits, which exist only in this process's memory (never in a system property or file). */
    private static char[] randomPassword() {
        byte[] bytes = new byte[24];
        RANDOM.nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes).toCharArray();
    }

    /**
     * {@code distlock-zookeeper-tls-<pid namespace>-<pid>-}: a process id means this process only within its PID
     * namespace (containers sharing a temporary directory each have their own).
     */
    private static String dirPrefix(long pid) {
        return DIR_PREFIX + PID_NAMESPACE.orElse("0") + "-" + pid + "-";
    }

    /** The PID namespace of this process on Linux ({@code /proc/self/ns/pid}); empty elsewhere. */
    private static Optional<String> pidNamespace() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
            String digits = link.replaceAll("\\D", "");
            return digits.isEmpty() ? Optional.empty() : Optional.of(digits);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Deletes the key store directories that processes of this user which ended without closing (killed) left behind:
     * a directory of this PID namespace whose process id is no live process (none where the namespace is unknown). Their key stores are encrypted with a password that died with
     * the process; this removes the files themselves.
     */
    private static void sweepLeftOvers() {
        if (PID_NAMESPACE.isEmpty()) {
            return; // a process id alone could name a live process elsewhere
        }
        String ours = DIR_PREFIX + PID_NAMESPACE.get() + "-";
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, ours + "*")) {
            for (Path left : dirs) {
                String rest = left.getFileName().toString().substring(ours.length());
                int dash = rest.indexOf('-');
                if (dash <= 0) {
                    continue;
                }
                try {
                    long pid = Long.parseLong(rest.substring(0, dash));
                    if (ProcessHandle.of(pid).isEmpty()) {
                        deleteQuietly(left);
                    }
                } catch (NumberFormatException e) {
                    // not one of ours
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: another user's directory, a temporary directory we cannot list
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
            Files.deleteIfExists(dir.resolve(KEY_STORE_FILE));
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory; nothing else to do
        }
    }

    private static boolean posix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }
}
