package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.metadata.EndPoint;
import com.datastax.oss.driver.api.core.ssl.SslEngineFactory;
import io.distlock.LockConfigurationException;
import io.distlock.toolkit.TlsSettings;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * The driver's TLS from {@link TlsSettings}: Netty's {@link SslContextBuilder} reads the PEM files (trusted
 * authorities, client certificate and key), and checks that the server's certificate names the node connected to
 * unless {@code verifyHost=false}.
 */
final class PemSslEngineFactory implements SslEngineFactory {

    private final SslContext context;

    private PemSslEngineFactory(SslContext context) {
        this.context = context;
    }

    /**
     * Loads the TLS material of {@code tls}.
     *
     * @throws LockConfigurationException naming the files if they are not PEM certificates and keys
     */
    static PemSslEngineFactory create(TlsSettings tls) {
        try {
            // Netty checks that the server's certificate names the host connected to (HTTPS rules) unless told not to.
            SslContextBuilder builder = SslContextBuilder.forClient()
                    .sslProvider(SslProvider.JDK)
                    .endpointIdentificationAlgorithm(tls.verifyHost() ? "HTTPS" : null);
            tls.caFile().ifPresent(ca -> builder.trustManager(ca.toFile()));
            if (tls.mutual()) {
                builder.keyManager(
                        tls.certFile().orElseThrow().toFile(),
                        tls.keyFile().orElseThrow().toFile());
            }
            return new PemSslEngineFactory(builder.build());
        } catch (SSLException | IllegalArgumentException e) {
            throw new LockConfigurationException(
                    "Cannot load the TLS material (" + TlsSettings.CA_FILE + "="
                            + tls.caFile().map(Object::toString).orElse("the JVM's trust store")
                            + (tls.mutual()
                                    ? ", " + TlsSettings.CERT_FILE + "="
                                            + tls.certFile().get() + ", " + TlsSettings.KEY_FILE + "="
                                            + tls.keyFile().get()
                                    : "")
                            + "): expected PEM certificates and an unencrypted PKCS#8 PEM key; " + e.getMessage(),
                    e);
        }
    }

    @Override
    public SSLEngine newSslEngine(EndPoint remoteEndpoint) {
        SocketAddress address = remoteEndpoint.resolve();
        SSLEngine engine = address instanceof InetSocketAddress inet
                ? context.newEngine(ByteBufAllocator.DEFAULT, inet.getHostString(), inet.getPort())
                : context.newEngine(ByteBufAllocator.DEFAULT);
        return engine;
    }

    @Override
    public void close() {
        // Nothing to release: the context holds no thread or file.
    }
}
