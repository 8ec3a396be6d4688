package io.distlock.redis;

import io.distlock.RemoteLockerBuilder;
import io.distlock.spi.Redaction;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The Redis backend's options, typed: the equivalent of the URI's query parameters.
 *
 * <pre>{@code
 * RemoteLocker locker = RedisLockOptions.create()
 *         .instanceTimeout(Duration.ofMillis(20))
 *         .clockDriftFactor(0.02)
 *         .applyTo(RemoteLockers.builder().uri("redlock://h1,h2,h3,h4,h5").leaseTime(Duration.ofSeconds(10)))
 *         .build();
 * }</pre>
 *
 * <p>Values are checked when the locker opens, as those from a URI are. Not thread-safe; build, then apply.
 */
public final class RedisLockOptions {

    private final Map<String, String> options = new LinkedHashMap<>();

    private RedisLockOptions() {}

    /** No options set: every option at its default. */
    public static RedisLockOptions create() {
        return new RedisLockOptions();
    }

    /** See {@link RedisLockBackendProvider#INSTANCE_TIMEOUT}. */
    public RedisLockOptions instanceTimeout(Duration timeout) {
        return put(RedisLockBackendProvider.INSTANCE_TIMEOUT, text(timeout));
    }

    /** See {@link RedisLockBackendProvider#RETRY_COUNT}. */
    public RedisLockOptions retryCount(int count) {
        return put(RedisLockBackendProvider.RETRY_COUNT, Integer.toString(count));
    }

    /** See {@link RedisLockBackendProvider#RETRY_DELAY}. */
    public RedisLockOptions retryDelay(Duration delay) {
        return put(RedisLockBackendProvider.RETRY_DELAY, text(delay));
    }

    /** See {@link RedisLockBackendProvider#POLL_INTERVAL}. */
    public RedisLockOptions pollInterval(Duration interval) {
        return put(RedisLockBackendProvider.POLL_INTERVAL, text(interval));
    }

    /** See {@link RedisLockBackendProvider#COURTESY}; {@link Duration#ZERO} turns it off. */
    public RedisLockOptions courtesy(Duration courtesy) {
        return put(
                RedisLockBackendProvider.COURTESY,
                Objects.requireNonNull(courtesy, "courtesy").isZero() ? "0" : text(courtesy));
    }

    /** See {@link RedisLockBackendProvider#CLOCK_DRIFT_FACTOR}. */
    public RedisLockOptions clockDriftFactor(double factor) {
        return put(RedisLockBackendProvider.CLOCK_DRIFT_FACTOR, Double.toString(factor));
    }

    /** See {@link RedisLockBackendProvider#KEY_PREFIX}. */
    public RedisLockOptions keyPrefix(String prefix) {
        return put(RedisLockBackendProvider.KEY_PREFIX, Objects.requireNonNull(prefix, "prefix"));
    }

    /** See {@link RedisLockBackendProvider#USER}: the ACL user (Redis 6+); needs a password. */
    public RedisLockOptions user(String user) {
        return put(RedisLockBackendProvider.USER, Objects.requireNonNull(user, "user"));
    }

    /** See {@link RedisLockBackendProvider#PASSWORD}; never shown by {@link #toString()}. */
    public RedisLockOptions password(String password) {
        return put(RedisLockBackendProvider.PASSWORD, Objects.requireNonNull(password, "password"));
    }

    /** The password is the first line of {@code file} (option {@code passwordFile}). */
    public RedisLockOptions passwordFile(Path file) {
        return put(
                RedisLockBackendProvider.PASSWORD + "File",
                Objects.requireNonNull(file, "file").toString());
    }

    /** The password is the value of environment variable {@code variable} (option {@code passwordEnv}). */
    public RedisLockOptions passwordEnv(String variable) {
        return put(RedisLockBackendProvider.PASSWORD + "Env", Objects.requireNonNull(variable, "variable"));
    }

    /** Connects over TLS (option {@code tls}); implied by {@code rediss://}. */
    public RedisLockOptions tls(boolean tls) {
        return put(TlsSettings.TLS, Boolean.toString(tls));
    }

    /** The PEM certificate authorities to trust (option {@code caFile}); default, the JVM's trust store. */
    public RedisLockOptions caFile(Path file) {
        return put(TlsSettings.CA_FILE, Objects.requireNonNull(file, "file").toString());
    }

    /**
     * The PEM client certificate and its unencrypted PKCS#8 PEM key, for mutual TLS (options {@code certFile} and
     * {@code keyFile}).
     */
    public RedisLockOptions clientCertificate(Path certFile, Path keyFile) {
        put(TlsSettings.CERT_FILE, Objects.requireNonNull(certFile, "certFile").toString());
        return put(
                TlsSettings.KEY_FILE, Objects.requireNonNull(keyFile, "keyFile").toString());
    }

    /** Whether the server's certificate must name the host connected to (option {@code verifyHost}, default true). */
    public RedisLockOptions verifyHost(boolean verify) {
        return put(TlsSettings.VERIFY_HOST, Boolean.toString(verify));
    }

    /** See {@link RedisLockBackendProvider#DATABASE}. */
    public RedisLockOptions database(int database) {
        return put(RedisLockBackendProvider.DATABASE, Integer.toString(database));
    }

    /** Sets every option given here on {@code builder}; returns the builder. */
    public RemoteLockerBuilder applyTo(RemoteLockerBuilder builder) {
        options.forEach(builder::option);
        return builder;
    }

    /** The options by name, as query parameters would give them. */
    public Map<String, String> asMap() {
        return Map.copyOf(options);
    }

    /** The options by name, a password's value hidden. */
    @Override
    public String toString() {
        Map<String, String> shown = new LinkedHashMap<>();
        options.forEach((name, value) -> shown.put(name, Redaction.isSecret(name) ? Redaction.HIDDEN : value));
        return "RedisLockOptions" + shown;
    }

    private RedisLockOptions put(String name, String value) {
        options.put(name, value);
        return this;
    }

    private static String text(Duration d) {
        return DurationText.of(Objects.requireNonNull(d, "duration"));
    }
}
