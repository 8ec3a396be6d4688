package io.distlock.etcd;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Secret;
import io.distlock.toolkit.TlsSettings;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * How the backend reaches etcd when it makes its own jetcd client: the endpoints and prefix of the URI, TLS ({@link
 * TlsSettings}, implied by {@code etcd+https}) and etcd's own user and password. TLS and authentication are jetcd's
 * (and gRPC's): distlock hands them the files and the credentials and reads no certificate itself.
 *
 * @param location the endpoints and the prefix
 * @param tls TLS settings when TLS is on
 * @param user the etcd user, when etcd authentication is used
 * @param password the user's password
 */
record EtcdConnection(
        EtcdLocation location, Optional<TlsSettings> tls, Optional<String> user, Optional<Secret> password) {

    /** Option: the etcd user the locker authenticates as (with {@value #PASSWORD}). */
    static final String USER = "user";

    /** Option (also {@code passwordFile}, {@code passwordEnv}): the etcd user's password. */
    static final String PASSWORD = "password";

    /** Every option this class reads: refused by {@link ApplicationClientProvider}, whose client has its own. */
    static final List<String> OPTIONS = List.of(
            USER,
            PASSWORD,
            PASSWORD + "File",
            PASSWORD + "Env",
            TlsSettings.TLS,
            TlsSettings.CA_FILE,
            TlsSettings.CERT_FILE,
            TlsSettings.KEY_FILE,
            TlsSettings.VERIFY_HOST);

    /**
     * Reads the URI and the connection options.
     *
     * @throws LockConfigurationException if the URI or an option is malformed, a file is missing, or a user comes
     *     without a password (or the reverse)
     */
    static EtcdConnection read(BackendConfig config) {
        Optional<TlsSettings> tls = TlsSettings.read(config, EtcdLocation.isTlsScheme(config.uri()));
        EtcdLocation location = EtcdLocation.parse(config.uri(), tls.isPresent());
        if (tls.isPresent() && !tls.get().verifyHost()) {
            throw new LockConfigurationException("Option 'verifyHost=false' is not offered by the etcd backend: etcd's"
                    + " client (gRPC) always checks that the member's certificate names the host in the URI; name the"
                    + " members in the URI as their certificates do");
        }
        Optional<String> user = config.option(USER).map(String::trim).filter(u -> !u.isEmpty());
        Optional<Secret> password = config.secretOption(PASSWORD);
        if (user.isPresent() != password.isPresent()) {
            throw new LockConfigurationException("Options '" + USER + "' and '" + PASSWORD + "' (or '" + PASSWORD
                    + "File', '" + PASSWORD + "Env') go together for etcd authentication; got only "
                    + (user.isPresent() ? "'" + USER + "'" : "a password"));
        }
        return new EtcdConnection(location, tls, user, password);
    }

    /**
     * Fails if any connection option is given: {@link ApplicationClientProvider} takes none.
     *
     * @throws LockConfigurationException naming the options
     */
    static void refuseOptions(BackendConfig config) {
        List<String> given =
                OPTIONS.stream().filter(o -> config.option(o).isPresent()).toList();
        if (!given.isEmpty()) {
            throw new LockConfigurationException("Option" + (given.size() > 1 ? "s " : " ") + given
                    + " cannot be used with the application's own jetcd Client: it already has its endpoints, TLS and"
                    + " credentials; configure them on the Client");
        }
    }

    /** Whether etcd will know the locker by a name: a user, or the client certificate's common name. */
    boolean identified() {
        return user.isPresent() || tls.map(TlsSettings::mutual).orElse(false);
    }

    /**
     * Builds the jetcd client; it connects on first use.
     *
     * @param adjust applied to the builder last (tests add interceptors)
     * @throws LockConfigurationException if the TLS files cannot be used (a malformed certificate or key)
     */
    Client build(Duration connectTimeout, UnaryOperator<ClientBuilder> adjust) {
        ClientBuilder builder = Client.builder()
                .endpoints(location.endpoints().toArray(String[]::new))
                .connectTimeout(connectTimeout)
                // EtcdCalls repeats what may be repeated, within operationTimeout; jetcd's own retry would repeat it
                // again past that (and refuses an operationTimeout below its 500 ms retry delay).
                .retryMaxAttempts(0)
                // Requests fail at once while the channel cannot connect, rather than wait for it, so a refused TLS
                // handshake (a certificate not trusted, none presented) or a member speaking the other protocol
                // (ProtocolProbe) is reported with its cause, not as a timeout; EtcdCalls repeats what failed for want
                // of a connection until the request's deadline.
                .waitForReady(false);
        if (tls.isPresent()) {
            builder.sslContext(sslContext(tls.get()));
        }
        if (user.isPresent()) {
            builder.user(ByteSequence.from(user.get(), StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password.orElseThrow().reveal(), StandardCharsets.UTF_8));
        }
        return adjust.apply(builder).build();
    }

    private static SslContext sslContext(TlsSettings tls) {
        try {
            SslContextBuilder ssl = GrpcSslContexts.forClient();
            tls.caFile().map(Path::toFile).ifPresent(ssl::trustManager);
            if (tls.mutual()) {
                ssl.keyManager(
                        tls.certFile().orElseThrow().toFile(),
                        tls.keyFile().orElseThrow().toFile());
            }
            return ssl.build();
        } catch (javax.net.ssl.SSLException | RuntimeException e) {
            throw new LockConfigurationException(
                    "Cannot use the TLS files " + files(tls) + " (options '"
                            + TlsSettings.CA_FILE + "', '" + TlsSettings.CERT_FILE + "', '" + TlsSettings.KEY_FILE
                            + "': PEM certificates, an unencrypted PKCS#8 PEM key): "
                            + e.getClass().getSimpleName()
                            + (e.getMessage() == null ? "" : ": " + e.getMessage()),
                    e);
        }
    }

    private static List<Path> files(TlsSettings tls) {
        return java.util.stream.Stream.of(tls.caFile(), tls.certFile(), tls.keyFile())
                .flatMap(Optional::stream)
                .toList();
    }

    /** Never the password. */
    @Override
    public String toString() {
        return "EtcdConnection[" + location.describe() + ", tls=" + tls.isPresent() + ", user=" + user.orElse("-")
                + "]";
    }
}
