package io.distlock.redis;

import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Redis started as production runs it, for the tests over secured connections: TLS only, client certificates
 * required, the default user off, and ACL users. {@value #LOCKER} has exactly what the backend needs on the default
 * prefix (docs/production.md states these rules as tested); {@value #STRANGER} has the same commands on another prefix only.
 * Certificates and passwords are made by the test run.
 */
final class SecuredRedis {

    /** The ACL user the lockers authenticate as. */
    static final String LOCKER = "locker";
    /** An ACL user with the same commands on keys {@code other:*} only. */
    static final String STRANGER = "stranger";
    /**
     * An ACL user with the locker's commands, the inspection's ({@link #INSPECTION_COMMANDS}) and the release
     * requests' ({@link #REQUEST_COMMANDS}), on keys of ours.
     */
    static final String OPERATOR = "operator";

    static final String LOCKER_PASSWORD = "pw-" + UUID.randomUUID();
    static final String STRANGER_PASSWORD = "pw-" + UUID.randomUUID();
    static final String OPERATOR_PASSWORD = "pw-" + UUID.randomUUID();

    /**
     * The commands of {@code release.lua}, {@code renew.lua}, acquisition and release messages, and of {@code
     * shared.lua} (read-write locks and semaphores).
     */
    static final List<String> COMMANDS = List.of(
            "+set",
            "+get",
            "+del",
            "+pexpire",
            "+publish",
            "+eval",
            "+evalsha",
            "+subscribe",
            "+time",
            "+zadd",
            "+zcard",
            "+zrange",
            "+zrem",
            "+zremrangebyscore",
            "+zscore");

    /**
     * What inspection adds ({@code inspect}, {@code listHeld}, {@code breakLock}, an election's leader): {@code
     * holders.lua}'s {@code TYPE}, {@code PTTL} and {@code ZRANGEBYSCORE}, and the listing's {@code SCAN}.
     */
    static final List<String> INSPECTION_COMMANDS = List.of("+type", "+pttl", "+zrangebyscore", "+scan");

    /**
     * What release requests add: {@code HGET} and {@code HSET} to ask ({@code holders.lua}'s {@code request}),
     * {@code HGET} and {@code HDEL} to hear (the renewal scripts). The operator has them; the locker has not, and
     * renews without them.
     */
    static final List<String> REQUEST_COMMANDS = List.of("+hget", "+hset", "+hdel");

    private static final Map<TestPki, String> LOCKER_OPTIONS = new ConcurrentHashMap<>();

    private SecuredRedis() {}

    /** A certificate authority of this run's own, in {@code target/pki/<name>-<random>}. */
    static TestPki pki(String name) {
        return TestPki.create(Path.of("target", "pki", name + "-" + UUID.randomUUID()));
    }

    /** {@code count} masters: TLS only, client certificates of {@code pki} required, ACL users. */
    static RedisServers servers(TestPki pki, int count) {
        return RedisServers.builder()
                .servers(count)
                .tls(pki)
                .requireClientCertificates()
                .aclUser(LOCKER, LOCKER_PASSWORD, rules("distlock:"))
                .aclUser(STRANGER, STRANGER_PASSWORD, rules("other:"))
                .aclUser(OPERATOR, OPERATOR_PASSWORD, operatorRules())
                .build();
    }

    private static String[] rules(String prefix) {
        List<String> rules = new java.util.ArrayList<>(List.of("~" + prefix + "*", "&" + prefix + "released"));
        rules.addAll(COMMANDS);
        return rules.toArray(String[]::new);
    }

    private static String[] operatorRules() {
        List<String> rules = new java.util.ArrayList<>(List.of(rules("distlock:")));
        rules.addAll(INSPECTION_COMMANDS);
        rules.addAll(REQUEST_COMMANDS);
        return rules.toArray(String[]::new);
    }

    /** A file whose first line is {@code password}, in the PKI's directory. */
    static Path passwordFile(TestPki pki, String password) {
        Path file = pki.caFile().resolveSibling("password-" + UUID.randomUUID());
        try {
            Files.writeString(file, password + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file.toAbsolutePath();
    }

    /**
     * The query options that reach the servers as {@value #LOCKER}: password by file, the run's authority, a client
     * certificate. No secret in them.
     */
    static String lockerOptions(TestPki pki) {
        // Once per authority: issuing again would rewrite the files while a locker may read them.
        return LOCKER_OPTIONS.computeIfAbsent(pki, SecuredRedis::newLockerOptions);
    }

    private static String newLockerOptions(TestPki pki) {
        TestPki.Identity client = pki.client(LOCKER);
        return "user=" + LOCKER + "&passwordFile=" + passwordFile(pki, LOCKER_PASSWORD) + "&caFile="
                + pki.caFile().toAbsolutePath() + "&certFile="
                + client.certFile().toAbsolutePath() + "&keyFile="
                + client.keyFile().toAbsolutePath();
    }

    /** Lettuce options for the application's (and the probe's) clients: TLS trusting the run's authority. */
    static ClientOptions clientOptions(TestPki pki, String identity) {
        TestPki.Identity client = pki.client(identity);
        return ClientOptions.builder()
                .sslOptions(SslOptions.builder()
                        .jdkSslProvider()
                        .trustManager(pki.caFile().toFile())
                        .keyManager(client.certFile().toFile(), client.keyFile().toFile(), null)
                        .build())
                .build();
    }

    /** A probe that looks into the servers as the fixture's admin user. */
    static RedisProbe probe(RedisServers servers, TestPki pki) {
        return new RedisProbe(
                servers.endpoints(),
                uri -> uri.withSsl(true)
                        .withVerifyPeer(SslVerifyMode.FULL)
                        .withAuthentication(RedisServers.ADMIN_USER, servers.adminPassword()),
                clientOptions(pki, "probe"));
    }
}
