package io.distlock.etcd;

import io.distlock.RemoteLockerBuilder;
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
            throw new IllegalArgumentException("operationTimeout must be positive, got " + timeout);
        }
        options.put(EtcdLockBackendProvider.OPERATION_TIMEOUT, timeout.toMillis() + "ms");
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

    @Override
    public String toString() {
        return "EtcdLockOptions" + options;
    }
}
