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
 * SELECT}) and TLS; and for a master found through Redis Sentinel, the sentinels' own credentials. Handed to Lettuce's
 * own options; distlock reads no certificate itself.
 *
 * @param user the ACL user (Redis 6+), if not the default user
 * @param password the password of that user, or of the default user
 * @param database the database number
 * @param tls how to reach the masters (and sentinels) over TLS; empty for plaintext
 * @param sentinelUser the sentinels' ACL user, if not their default user
 * @param sentinelPassword the sentinels' password, if they ask for one
 */
record ConnectionSettings(
        Optional<String> user,
        Optional<Secret> password,
        int database,
        Optional<TlsSettings> tls,
        Optional<String> sentinelUser,
        Optional<Secret> sentinelPassword) {

    /** Every option that says how to connect: refused on a locker that uses the application's client. */
    static final List<String> OPTIONS = List.of(
            RedisLockBackendProvider.USER,
            RedisLockBackendProvider.PASSWORD,
            RedisLockBackendProvider.PASSWORD + "File",
            RedisLockBackendProvider.PASSWORD + "Env",
            RedisLockBackendProvider.DATABASE,
            RedisLockBackendProvider.SENTINEL_USER,
            RedisLockBackendProvider.SENTINEL_PASSWORD,
            RedisLockBackendProvider.SENTINEL_PASSWORD + "File",
            RedisLockBackendProvider.SENTINEL_PASSWORD + "Env",
            TlsSettings.TLS,
            TlsSettings.CA_FILE,
            TlsSettings.CERT_FILE,
            TlsSettings.KEY_FILE,
            TlsSettings.VERIFY_HOST);

    /**
     * Reads the connection options.
     *
     * @param tlsScheme whether the URI's scheme is {@code rediss}
     * @param sentinels whether the URI names sentinels ({@code redis-sentinel}), whose own credentials are options
     * @throws LockConfigurationException if a user comes without a password, a sentinel option without sentinels, or
     *     a TLS or secret option is wrong
     */
    static ConnectionSettings read(BackendConfig config, boolean tlsScheme, boolean sentinels) {
        Optional<String> user = config.option(RedisLockBackendProvider.USER);
        Optional<Secret> password = config.secretOption(RedisLockBackendProvider.PASSWORD);
        int database = config.intOption(RedisLockBackendProvider.DATABASE, 0, 0, 1 << 16);
        Optional<TlsSettings> tls = TlsSettings.read(config, tlsScheme);
        Optional<String> sentinelUser = config.option(RedisLockBackendProvider.SENTINEL_USER);
        Optional<Secret> sentinelPassword = config.secretOption(RedisLockBackendProvider.SENTINEL_PASSWORD);
        checkUser(RedisLockBackendProvider.USER, user, password, RedisLockBackendProvider.PASSWORD);
        checkUser(
                RedisLockBackendProvider.SENTINEL_USER,
                sentinelUser,
                sentinelPassword,
                RedisLockBackendProvider.SENTINEL_PASSWORD);
        if (!sentinels && (sentinelUser.isPresent() || sentinelPassword.isPresent())) {
            throw new LockConfigurationException("Options '" + RedisLockBackendProvider.SENTINEL_USER + "' and '"
                    + RedisLockBackendProvider.SENTINEL_PASSWORD + "' are for a master found through Redis Sentinel"
                    + " (redis-sentinel://s1:26379,s2:26379/mymaster); this URI names the masters themselves");
        }
        return new ConnectionSettings(user, password, database, tls, sentinelUser, sentinelPassword);
    }

    /** Plaintext, the default user without a password, database 0: a local server as it comes. */
    static ConnectionSettings plaintext() {
        return new ConnectionSettings(
                Optional.empty(), Optional.empty(), 0, Optional.empty(), Optional.empty(), Optional.empty());
    }

    private static void checkUser(String userOption, Optional<String> user, Optional<Secret> password, String secret) {
        if (user.isPresent() && user.get().isBlank()) {
            throw new LockConfigurationException("Option '" + userOption + "' is blank");
        }
        if (user.isPresent() && password.isEmpty()) {
            throw new LockConfigurationException("Option '" + userOption + "' needs a password (Redis ACL users"
                    + " authenticate with AUTH user password): give option '" + secret + "', '" + secret + "File' or '"
                    + secret + "Env'");
        }
    }

    /** The Lettuce URI of {@code master}: host, port, database, credentials, TLS and host checking. */
    RedisURI redisUri(Address master, Duration connectTimeout) {
        RedisURI.Builder uri = RedisURI.builder()
                .withHost(master.host())
                .withPort(master.port())
                .withDatabase(database)
                .withTimeout(connectTimeout);
        return secured(uri, user, password).build();
    }

    /**
     * The Lettuce URI of the master that {@code sentinels} watch under {@code masterName}: Lettuce asks a sentinel for
     * the master's address at every connection and reconnection, so a connection made after a failover reaches the
     * promoted replica. The master's credentials, database and TLS as {@link #redisUri}; the sentinels' own
     * credentials, and the same TLS.
     */
    RedisURI sentinelUri(List<Address> sentinels, String masterName, Duration connectTimeout) {
        RedisURI.Builder uri = RedisURI.builder()
                .withSentinelMasterId(masterName)
                .withDatabase(database)
                .withTimeout(connectTimeout);
        for (Address s : sentinels) {
            RedisURI.Builder sentinel =
                    RedisURI.builder().withHost(s.host()).withPort(s.port()).withTimeout(connectTimeout);
            uri.withSentinel(secured(sentinel, sentinelUser, sentinelPassword).build());
        }
        return secured(uri, user, password).build();
    }

    private RedisURI.Builder secured(RedisURI.Builder uri, Optional<String> user, Optional<Secret> password) {
        if (password.isPresent()) {
            char[] secret = password.get().reveal().toCharArray();
            if (user.isPresent()) {
                uri.withAuthentication(user.get(), secret);
            } else {
                uri.withPassword(secret);
            }
        }
        tls.ifPresent(t -> uri.withSsl(true).withVerifyPeer(t.verifyHost() ? SslVerifyMode.FULL : SslVerifyMode.CA));
        return uri;
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
                + sentinelUser.map(u -> ", sentinelUser=" + u).orElse("")
                + sentinelPassword.map(p -> ", sentinelPassword=****").orElse("") + "]";
    }
}
