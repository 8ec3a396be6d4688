package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The run's certificates work for a real TLS handshake, mutual and host-checked, and a stranger's do not. */
class TestPkiTest {

    @TempDir
    Path dir;

    private static SSLContext context(Path trusted, TestPki.Identity identity) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(trusted)) {
            trust.setCertificateEntry(
                    "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(identity.keyStore())) {
            keys.load(in, identity.keyStorePassword().toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, identity.keyStorePassword().toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }

    /** Runs one mutual, host-checked handshake; throws what the client saw. */
    private static void handshake(SSLContext serverContext, SSLContext clientContext) throws Exception {
        try (SSLServerSocket server = (SSLServerSocket)
                serverContext.getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            server.setNeedClientAuth(true);
            CompletableFuture<Void> accepted = CompletableFuture.runAsync(() -> {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    s.startHandshake();
                    s.getOutputStream().write(1);
                } catch (Exception ignored) {
                    // the client reports the failure
                }
            });
            try (SSLSocket client =
                    (SSLSocket) clientContext.getSocketFactory().createSocket("localhost", server.getLocalPort())) {
                SSLParameters parameters = client.getSSLParameters();
                parameters.setEndpointIdentificationAlgorithm("HTTPS");
                client.setSSLParameters(parameters);
                client.startHandshake();
                assertThat(client.getInputStream().read()).isEqualTo(1);
            }
            accepted.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void certificates_makeAMutualHostCheckedHandshake_andAStrangersAreRefused() throws Exception {
        TestPki pki = TestPki.create(dir.resolve("ours"));
        TestPki.Identity server = pki.server("store");
        TestPki.Identity client = pki.client("locker");
        assertThat(Files.readString(client.keyFile())).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.readString(server.certFile())).contains("-----BEGIN CERTIFICATE-----");

        handshake(context(pki.caFile(), server), context(pki.caFile(), client));

        TestPki stranger = TestPki.create(dir.resolve("stranger"));
        assertThatThrownBy(() ->
                        handshake(context(pki.caFile(), server), context(stranger.caFile(), stranger.client("x"))))
                .isInstanceOf(SSLException.class);
    }
}
