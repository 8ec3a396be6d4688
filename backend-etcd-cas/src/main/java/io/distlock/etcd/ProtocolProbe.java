package io.distlock.etcd;

import io.distlock.toolkit.DurationText;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells, when a connection to a member closes before etcd said a word, whether the member speaks the other protocol:
 * TLS to a plaintext client, plaintext to a TLS one. etcd closes such a connection silently (gRPC sees "Network
 * closed for unknown reason", or "Connection closed while performing TLS negotiation"), as a member going down would;
 * waiting cannot mend it, so opening asks once, directly, and fails at once with the hint. Runs at most once per
 * opening: the first closed connection asks, later ones reuse the answer.
 *
 * <p>A plaintext client asks with a TLS handshake whose trust manager accepts nothing: a member whose certificate
 * reaches it speaks TLS (the handshake is then abandoned, nothing is sent). A TLS client asks with an HTTP/1.1 {@code
 * GET /version}, which a plaintext member answers.
 */
final class ProtocolProbe {

    private static final Logger log = LoggerFactory.getLogger(ProtocolProbe.class);

    private final EtcdLocation location;
    private final boolean tls;
    private final int timeoutMillis;
    private Optional<String> found = Optional.empty();
    private boolean asked;

    /**
     * @param location the endpoints the client dials
     * @param tls whether the client speaks TLS to them
     * @param timeout the bound of each endpoint's probe (connect and answer)
     */
    ProtocolProbe(EtcdLocation location, boolean tls, Duration timeout) {
        this.location = location;
        this.tls = tls;
        this.timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    }

    /**
     * Whether {@code failure} is a connection the member closed unanswered and a member speaks the other protocol; asks
     * the members the first time such a failure comes, and blocks for that (at most the timeout per endpoint).
     */
    synchronized boolean mismatched(Throwable failure) {
        if (!asked && closedUnanswered(failure)) {
            asked = true;
            long start = System.nanoTime();
            found = ask();
            log.debug(
                    "Asked {} which protocol it speaks after a connection closed unanswered ({} ms): {}",
                    location.describeEndpoints(),
                    (System.nanoTime() - start) / 1_000_000,
                    found.orElse("no mismatch"));
        }
        return found.isPresent();
    }

    /** The hint, once {@link #mismatched} found a mismatch. */
    synchronized Optional<String> found() {
        return found;
    }

    private static boolean closedUnanswered(Throwable failure) {
        if (EtcdCalls.statusCode(failure) != io.grpc.Status.Code.UNAVAILABLE) {
            return false;
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String message = String.valueOf(t.getMessage());
            // A TLS-only member closes a plaintext client's connection, or now and then resets it (seen under load)
            if (message.contains("Network closed for unknown reason")
                    || message.contains("closed while performing TLS negotiation")
                    || message.contains("Connection reset by peer")) {
                return true;
            }
        }
        return false;
    }

    private Optional<String> ask() {
        for (String endpoint : location.endpoints()) {
            URI uri = URI.create(endpoint);
            InetSocketAddress address = new InetSocketAddress(uri.getHost(), uri.getPort());
            if (!tls && speaksTls(address)) {
                return Optional.of("the member at " + endpoint.substring("http://".length())
                        + " speaks TLS and this client does not: use etcd+https:// (with caFile if the member's"
                        + " certificate is not signed by an authority the JVM trusts)");
            }
            if (tls && speaksPlaintext(address)) {
                return Optional.of("TLS handshake failed: the member at " + endpoint.substring("https://".length())
                        + " does not speak TLS on that port (it answered in plaintext); use etcd:// for a plaintext"
                        + " member, or the port where it serves TLS");
            }
        }
        return Optional.empty();
    }

    private boolean speaksTls(InetSocketAddress address) {
        AtomicBoolean certificateCame = new AtomicBoolean();
        TrustManager refuseAll = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                throw new CertificateException("probe only");
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                certificateCame.set(true);
                throw new CertificateException("probe only: nothing is trusted");
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {refuseAll}, null);
            try (Socket plain = connect(address);
                    SSLSocket socket = (SSLSocket) context.getSocketFactory()
                            .createSocket(plain, address.getHostString(), address.getPort(), true)) {
                socket.startHandshake();
            }
        } catch (IOException | java.security.GeneralSecurityException e) {
            // expected: the handshake is refused by our own trust manager, or by a member that does not speak TLS
        }
        return certificateCame.get();
    }

    private boolean speaksPlaintext(InetSocketAddress address) {
        try (Socket socket = connect(address)) {
            socket.getOutputStream()
                    .write(("GET /version HTTP/1.1\r\nHost: " + address.getHostString()
                                    + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            byte[] head = in.readNBytes(5);
            return new String(head, StandardCharsets.US_ASCII).equals("HTTP/");
        } catch (IOException e) {
            return false;
        }
    }

    private Socket connect(InetSocketAddress address) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(address, timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    @Override
    public String toString() {
        return "ProtocolProbe[" + location.describeEndpoints() + ", tls=" + tls + ", timeout="
                + DurationText.of(Duration.ofMillis(timeoutMillis)) + "]";
    }
}
