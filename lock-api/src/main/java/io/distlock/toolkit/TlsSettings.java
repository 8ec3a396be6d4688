package io.distlock.toolkit;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How to reach a store over TLS, read the same way by every backend from its options, and handed to the store's own
 * client library (which does the TLS: distlock reads no certificate itself).
 *
 * <ul>
 *   <li>{@code tls} ({@code true}/{@code false}): connect over TLS. Implied by a TLS scheme such as {@code rediss://}
 *       or {@code etcd+https://}.
 *   <li>{@code caFile}: a PEM file of the certificate authorities to trust; default, the JVM's trust store.
 *   <li>{@code certFile} and {@code keyFile}: a PEM client certificate (chain) and its unencrypted PKCS#8 PEM private
 *       key, for mutual TLS; both or neither.
 *   <li>{@code verifyHost} (default {@code true}): check that the server's certificate names the host connected to.
 *       The certificate chain itself is always verified.
 * </ul>
 *
 * @param caFile the certificate authorities to trust, if not the JVM's
 * @param certFile the client certificate for mutual TLS
 * @param keyFile the client certificate's private key
 * @param verifyHost whether the server's certificate must name the host
 */
public record TlsSettings(Optional<Path> caFile, Optional<Path> certFile, Optional<Path> keyFile, boolean verifyHost) {

    /** Option: connect over TLS. */
    public static final String TLS = "tls";
    /** Option: the PEM file of the certificate authorities to trust. */
    public static final String CA_FILE = "caFile";
    /** Option: the PEM client certificate for mutual TLS. */
    public static final String CERT_FILE = "certFile";
    /** Option: the PEM private key of the client certificate. */
    public static final String KEY_FILE = "keyFile";
    /** Option: whether the server's certificate must name the host connected to. */
    public static final String VERIFY_HOST = "verifyHost";

    /** Checks that every part is given and the client certificate comes with its key. */
    public TlsSettings {
        if (certFile.isPresent() != keyFile.isPresent()) {
            throw new LockConfigurationException("Options '" + CERT_FILE + "' and '" + KEY_FILE
                    + "' go together (a client certificate and its private key, for mutual TLS); got only '"
                    + (certFile.isPresent() ? CERT_FILE : KEY_FILE) + "'");
        }
    }

    /** Whether a client certificate is presented (mutual TLS). */
    public boolean mutual() {
        return certFile.isPresent();
    }

    /**
     * Reads the TLS options of {@code config}.
     *
     * @param tlsScheme whether the URI's scheme already asks for TLS ({@code rediss}, {@code etcd+https})
     * @return the settings when TLS is on; empty when it is off
     * @throws LockConfigurationException if a file is missing or unreadable, {@code certFile} comes without {@code
     *     keyFile} (or the reverse), TLS options are given with TLS off, or {@code tls=false} contradicts the scheme
     */
    public static Optional<TlsSettings> read(BackendConfig config, boolean tlsScheme) {
        Optional<String> flag = config.option(TLS);
        boolean on = config.booleanOption(TLS, tlsScheme);
        if (tlsScheme && !on) {
            throw new LockConfigurationException("Option 'tls=false' contradicts the URI's scheme '"
                    + config.uri().getScheme() + "', which is a TLS scheme");
        }
        Optional<Path> ca = config.fileOption(CA_FILE);
        Optional<Path> cert = config.fileOption(CERT_FILE);
        Optional<Path> key = config.fileOption(KEY_FILE);
        boolean verifyHost = config.booleanOption(VERIFY_HOST, true);
        if (!on) {
            boolean given = ca.isPresent()
                    || cert.isPresent()
                    || key.isPresent()
                    || config.option(VERIFY_HOST).isPresent();
            if (given) {
                throw new LockConfigurationException("TLS options (" + CA_FILE + ", " + CERT_FILE + ", " + KEY_FILE
                        + ", " + VERIFY_HOST + ") are given but TLS is off"
                        + (flag.isPresent() ? "" : ": add tls=true, or use the scheme's TLS form"));
            }
            return Optional.empty();
        }
        return Optional.of(new TlsSettings(ca, cert, key, verifyHost));
    }
}
