package io.distlock.redis;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Secret;
import io.distlock.toolkit.HostList.Address;
import io.distlock.toolkit.TlsSettings;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.TimeoutOptions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * How distlock's own clients reach every master: the ACL user and password ({@code AUTH}), the database ({@code
 * SELECT}) and TLS. Handed to Lettuce's own options; distlock reads no certificate itself.
 *
 * @param user the ACL user (Redis 6+), if not the default user
 * @param password the password of that user, or of the default user
 * @param database the database number
 * @param tls how to reach the masters over TLS; empty for plaintext
 */
record ConnectionSettings(Optional<String> user, Optional<Secret> password, int database, Optional<TlsSettings> tls) {

    /** Every option that says how to connect: refused on a locker that uses the application's client. */
    static final List<String> OPTIONS = List.of(
            RedisLockBackendProvider.USER,
            RedisLockBackendProvider.PASSWORD,
            RedisLockBackendProvider.PASSWORD + "File",
            RedisLockBackendProvider.PASSWORD + "Env",
            RedisLockBackendProvider.DATABASE,
            TlsSettings.TLS,
            TlsSettings.CA_FILE,
            TlsSettings.CERT_FILE,
            TlsSettings.KEY_FILE,
            TlsSettings.VERIFY_HOST);

    /**
     * Reads the connection options.
     *
     * @param tlsScheme whether the URI's scheme is {@code rediss}
     * @throws LockConfigurationException if a user comes without a password, or a TLS or secret option is wrong
     */
    static ConnectionSettings read(BackendConfig config, boolean tlsScheme) {
        Optional<String> user = config.option(RedisLockBackendProvider.USER);
        Optional<Secret> password = config.secretOption(RedisLockBackendProvider.PASSWORD);
        int database = config.intOption(RedisLockBackendProvider.DATABASE, 0, 0, 1 << 16);
        Optional<TlsSettings> tls = TlsSettings.read(config, tlsScheme);
        if (user.isPresent() && user.get().isBlank()) {
            throw new LockConfigurationException("Option '" + RedisLockBackendProvider.USER + "' is blank");
        }
        if (user.isPresent() && password.isEmpty()) {
            throw new LockConfigurationException("Option '" + RedisLockBackendProvider.USER + "' needs a password"
                    + " (Redis ACL users authenticate with AUTH user password): give option 'password', 'passwordFile'"
                    + " or 'passwordEnv'");
        }
        return new ConnectionSettings(user, password, database, tls);
    }

    /** The Lettuce URI of {@code master}: host, port, database, credentials, TLS and host checking. */
    RedisURI redisUri(Address master, Duration connectTimeout) {
        RedisURI.Builder uri = RedisURI.builder()
                .withHost(master.host())
                .withPort(master.port())
                .withDatabase(database)
                .withTimeout(connectTimeout);
        if (password.isPresent()) {
            char[] secret = password.get().reveal().toCharArray();
            if (user.isPresent()) {
                uri.withAuthentication(user.get(), secret);
            } else {
                uri.withPassword(secret);
            }
        }
        tls.ifPresent(t -> uri.withSsl(true).withVerifyPeer(t.verifyHost() ? SslVerifyMode.FULL : SslVerifyMode.CA));
        return uri.build();
    }

    /**
     * The client options of distlock's own clients: commands for a master that is down fail at once (a "no") instead
     * of queueing until it returns, long after the attempt that sent them gave up; so do the commands still unanswered
     * when a connection drops: re-sent on reconnection, a {@code SET NX} whose clean-up was rejected meanwhile would
     * hold the key for a whole ttl (RedlockReconnectTest). TLS trust and client certificates go to Lettuce's {@link
     * SslOptions}, whose handshake is bounded by the connect timeout. Lettuce's own per-command timeout is off: every
     * command is bounded by the backend's timeouts already ({@code instanceTimeout} or the confirm timeout, see {@link
     * Master}), and Lettuce's would arm a second timer for each, to cancel a command long after its answer stopped
     * mattering.
     */
    ClientOptions clientOptions(Duration connectTimeout) {
        ClientOptions.Builder options = ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
                .socketOptions(
                        SocketOptions.builder().connectTimeout(connectTimeout).build());
        tls.ifPresent(t -> {
            SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider().handshakeTimeout(connectTimeout);
            t.caFile().ifPresent(ca -> ssl.trustManager(ca.toFile()));
            if (t.mutual()) {
                ssl.keyManager(
                        t.certFile().orElseThrow().toFile(),
                        t.keyFile().orElseThrow().toFile(),
                        null);
            }
            options.sslOptions(ssl.build());
        });
        return options.build();
    }

    /** The settings without the password's value. */
    @Override
    public String toString() {
        return "ConnectionSettings[user=" + user.orElse("default") + ", password="
                + password.map(p -> "****").orElse("none") + ", database=" + database + ", tls=" + tls.isPresent()
                + "]";
    }
}
