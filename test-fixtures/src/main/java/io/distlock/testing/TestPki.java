package io.distlock.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObject;

/**
 * Certificates made by the test run, for stores started with TLS on: a certificate authority of the run's own, and
 * server and client certificates it signs, written as PEM files (certificate, unencrypted PKCS#8 key) and, for servers
 * that want one, as a PKCS#12 key store. Nothing is committed and nothing outlives the run: each instance makes a new
 * authority in its own directory, valid for a day.
 *
 * <pre>{@code
 * TestPki pki = TestPki.create(dir);
 * TestPki.Identity server = pki.server("localhost");      // SAN: localhost, 127.0.0.1, 127.0.0.2, 127.0.0.3
 * TestPki.Identity client = pki.client("locker");          // CN=locker, for mutual TLS
 * TestPki other = TestPki.create(otherDir);                // an authority the store does not trust
 * }</pre>
 */
public final class TestPki {

    private static final Duration VALIDITY = Duration.ofDays(1);
    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    private final Path dir;
    private final KeyPair caKeys;
    private final X509Certificate ca;
    private final Path caFile;

    /**
     * One issued identity: its certificate and key as PEM files, and the same in a PKCS#12 key store.
     *
     * @param certFile the certificate (PEM)
     * @param keyFile its private key (PEM, unencrypted PKCS#8)
     * @param keyStore the key and certificate chain in a PKCS#12 store, alias {@code identity}
     * @param keyStorePassword the key store's password (a test value, not a secret of anyone's)
     */
    public record Identity(Path certFile, Path keyFile, Path keyStore, String keyStorePassword) {}

    private TestPki(Path dir, KeyPair caKeys, X509Certificate ca, Path caFile) {
        this.dir = dir;
        this.caKeys = caKeys;
        this.ca = ca;
        this.caFile = caFile;
    }

    /** Makes a new certificate authority, writing its certificate to {@code dir/ca.pem}. */
    public static TestPki create(Path dir) {
        try {
            Files.createDirectories(dir);
            KeyPair keys = keyPair();
            X500Name name = new X500Name("CN=distlock test CA " + SERIALS.incrementAndGet());
            X509v3CertificateBuilder builder = builder(name, name, keys)
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            X509Certificate ca = sign(builder, keys.getPrivate());
            Path caFile = dir.resolve("ca.pem");
            writePem(caFile, List.of(ca));
            return new TestPki(dir, keys, ca, caFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("Could not make a test certificate authority", e);
        }
    }

    /** The authority's certificate (PEM): what a client or server is told to trust. */
    public Path caFile() {
        return caFile;
    }

    /** The authority's certificate in a PKCS#12 trust store (password {@code changeit}), for servers that want one. */
    public Path trustStore() {
        Path file = dir.resolve("ca.p12");
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setCertificateEntry("ca", ca);
            try (OutputStream out = Files.newOutputStream(file)) {
                store.store(out, "changeit".toCharArray());
            }
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A server certificate for {@code commonName}, valid for the host names {@code localhost} and the loopback
     * addresses {@code 127.0.0.1} to {@code 127.0.0.3} (the fixtures' three-node clusters).
     */
    public Identity server(String commonName) {
        return issue(commonName, true);
    }

    /** A client certificate whose subject is {@code CN=commonName}, for mutual TLS. */
    public Identity client(String commonName) {
        return issue(commonName, false);
    }

    private Identity issue(String commonName, boolean server) {
        try {
            KeyPair keys = keyPair();
            X509v3CertificateBuilder builder = builder(
                            new X500Name(ca.getSubjectX500Principal().getName()),
                            new X500Name("CN=" + commonName),
                            keys)
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(
                            Extension.keyUsage,
                            true,
                            new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
                    .addExtension(
                            Extension.extendedKeyUsage,
                            false,
                            new ExtendedKeyUsage(
                                    server
                                            ? new KeyPurposeId[] {
                                                KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                                            }
                                            : new KeyPurposeId[] {KeyPurposeId.id_kp_clientAuth}));
            if (server) {
                List<GeneralName> names = new ArrayList<>();
                names.add(new GeneralName(GeneralName.dNSName, "localhost"));
                for (int i = 1; i <= 3; i++) {
                    names.add(new GeneralName(GeneralName.iPAddress, "127.0.0." + i));
                }
                builder.addExtension(
                        Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
            }
            X509Certificate cert = sign(builder, caKeys.getPrivate());
            String base = (server ? "server-" : "client-") + commonName;
            Path certFile = dir.resolve(base + ".pem");
            Path keyFile = dir.resolve(base + ".key");
            Path keyStore = dir.resolve(base + ".p12");
            writePem(certFile, List.of(cert, ca));
            writeKey(keyFile, keys.getPrivate());
            String password = "changeit";
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("identity", keys.getPrivate(), password.toCharArray(), new Certificate[] {cert, ca});
            try (OutputStream out = Files.newOutputStream(keyStore)) {
                store.store(out, password.toCharArray());
            }
            return new Identity(certFile, keyFile, keyStore, password);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("Could not issue a test certificate for " + commonName, e);
        }
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256, new SecureRandom());
        return generator.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(
                issuer,
                BigInteger.valueOf(SERIALS.incrementAndGet()),
                Date.from(now.minus(Duration.ofHours(1))),
                Date.from(now.plus(VALIDITY)),
                subject,
                keys.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner contentSigner = new JcaContentSignerBuilder("SHA256withECDSA").build(signer);
        return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
    }

    private static void writePem(Path file, List<X509Certificate> certificates) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
            for (X509Certificate c : certificates) {
                pem.writeObject(c);
            }
        }
        Files.writeString(file, text.toString(), StandardCharsets.US_ASCII);
    }

    /** Writes the key as unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}), the form every client library reads. */
    private static void writeKey(Path file, PrivateKey key) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
            pem.writeObject(new PemObject("PRIVATE KEY", key.getEncoded()));
        }
        Files.writeString(file, text.toString(), StandardCharsets.US_ASCII);
    }
}
