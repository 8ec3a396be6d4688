package io.distlock.etcd;

import io.distlock.RemoteLockerBuilder;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The etcd backend's options, typed: the equivalent of writing them into the URI's query. Not thread-safe.
 *
 * <pre>{@code
 * RemoteLocker locker = EtcdLockOptions.create()
 *         .mode(EtcdLockMode.CAS)
 *         .operationTimeout(Duration.ofSeconds(3))
 *         .applyTo(RemoteLockers.builder().uri("etcd://127.0.0.1:2379/locks"))
 *         .build();
 * }</pre>
 *
 * is the same as {@code RemoteLockers.open("etcd://127.0.0.1:2379/locks?mode=cas&operationTimeout=3s")}. The lease
 * time ({@code ttl}) and the connect timeout are common to all backends: set them with {@link
 * RemoteLockerBuilder#leaseTime} and {@link RemoteLockerBuilder#connectTimeout}.
 */
public final class EtcdLockOptions {

    private final Map<String, String> options = new LinkedHashMap<>();

    private EtcdLockOptions() {}

    /** No options set: every one at its default. */
    public static EtcdLockOptions create() {
        return new EtcdLockOptions();
    }

    /** Option {@value EtcdLockBackendProvider#MODE}: how locks are laid out and taken; default {@link EtcdLockMode#FAIR}. */
    public EtcdLockOptions mode(EtcdLockMode mode) {
        options.put(
                EtcdLockBackendProvider.MODE,
                Objects.requireNonNull(mode, "mode").optionValue());
        return this;
    }

    /**
     * Option {@value EtcdLockBackendProvider#OPERATION_TIMEOUT}: how long one store operation (a tryLock, a release, a
     * renewal) may take, retries after lost replies included; default the connect timeout.
     *
     * @throws IllegalArgumentException if not positive
     */
    public EtcdLockOptions operationTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "operationTimeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("operationTimeout must be positive, got " + DurationText.of(timeout));
        }
        options.put(EtcdLockBackendProvider.OPERATION_TIMEOUT, timeout.toMillis() + "ms");
        return this;
    }

    /**
     * Option {@code user}: the etcd user the locker authenticates as, with one of {@link #password}, {@link
     * #passwordFile} or {@link #passwordEnv}.
     */
    public EtcdLockOptions user(String user) {
        options.put(EtcdConnection.USER, Objects.requireNonNull(user, "user"));
        return this;
    }

    /** Option {@code password}: the etcd user's password; never shown by {@link #toString()}. */
    public EtcdLockOptions password(String password) {
        options.put(EtcdConnection.PASSWORD, Objects.requireNonNull(password, "password"));
        return this;
    }

    /** Option {@code passwordFile}: a file whose first line is the etcd user's password. */
    public EtcdLockOptions passwordFile(Path file) {
        options.put(
                EtcdConnection.PASSWORD + "File",
                Objects.requireNonNull(file, "file").toString());
        return this;
    }

    /** Option {@code passwordEnv}: the environment variable that holds the etcd user's password. */
    public EtcdLockOptions passwordEnv(String variable) {
        options.put(EtcdConnection.PASSWORD + "Env", Objects.requireNonNull(variable, "variable"));
        return this;
    }

    /** Option {@code caFile}: the PEM authorities that signed the members' certificates; turns TLS on. */
    public EtcdLockOptions caFile(Path file) {
        options.put(TlsSettings.TLS, "true");
        options.put(TlsSettings.CA_FILE, Objects.requireNonNull(file, "file").toString());
        return this;
    }

    /**
     * Options {@code certFile} and {@code keyFile}: the PEM client certificate and its unencrypted PKCS#8 PEM key, for
     * a cluster run with {@code --client-cert-auth}; turns TLS on.
     */
    public EtcdLockOptions clientCertificate(Path certFile, Path keyFile) {
        options.put(TlsSettings.TLS, "true");
        options.put(
                TlsSettings.CERT_FILE,
                Objects.requireNonNull(certFile, "certFile").toString());
        options.put(
                TlsSettings.KEY_FILE, Objects.requireNonNull(keyFile, "keyFile").toString());
        return this;
    }

    /**
     * Sets these options on {@code builder}, as {@link RemoteLockerBuilder#option} would.
     *
     * @return {@code builder}
     */
    public RemoteLockerBuilder applyTo(RemoteLockerBuilder builder) {
        Objects.requireNonNull(builder, "builder");
        options.forEach(builder::option);
        return builder;
    }

    /** The options set, the password shown as {@code ****}. */
    @Override
    public String toString() {
        Map<String, String> shown = new LinkedHashMap<>(options);
        shown.computeIfPresent(EtcdConnection.PASSWORD, (name, value) -> "****");
        return "EtcdLockOptions" + shown;
    }
}
