package io.distlock;

import io.distlock.internal.LockerFactory;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.ManualTicker;
import io.distlock.toolkit.OwnerIds;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Builds a {@link RemoteLocker}. Settings given here take the place of the URI's query options of the same name;
 * giving one in both places is an error. Not thread-safe; {@link #build()} may be called more than once.
 */
public final class RemoteLockerBuilder {

    private String uri;
    private final Map<String, String> options = new LinkedHashMap<>();
    private Optional<Duration> leaseTime = Optional.empty();
    private Optional<Duration> lockDelay = Optional.empty();
    private Optional<Duration> connectTimeout = Optional.empty();
    private Optional<LockBackendProvider> provider = Optional.empty();
    private Ticker ticker = Ticker.system();
    private Clock clock = Clock.systemUTC();
    private Optional<Executor> listenerExecutor = Optional.empty();
    private LockObserver observer = LockObserver.none();
    private String ownerLabel = OwnerIds.defaultLabel();
    private Optional<Duration> atRiskThreshold = Optional.empty();

    RemoteLockerBuilder() {}

    /** The store's URI, e.g. {@code etcd://127.0.0.1:2379/locks}. Required. */
    public RemoteLockerBuilder uri(String uri) {
        this.uri = Objects.requireNonNull(uri, "uri must not be null");
        return this;
    }

    /** The store's URI. Required. */
    public RemoteLockerBuilder uri(URI uri) {
        return uri(Objects.requireNonNull(uri, "uri must not be null").toString());
    }

    /**
     * The lease time of each lock (option {@code ttl}, default 30s): how long a crashed holder keeps the lock before
     * the store frees it. Held locks are renewed every third of it.
     *
     * @throws IllegalArgumentException if not positive
     */
    public RemoteLockerBuilder leaseTime(Duration leaseTime) {
        this.leaseTime = Optional.of(io.distlock.internal.Checks.positive(leaseTime, "leaseTime"));
        return this;
    }

    /**
     * How long opening may block connecting to the store (option {@code connectTimeout}, default 10s).
     *
     * @throws IllegalArgumentException if not positive
     */
    public RemoteLockerBuilder connectTimeout(Duration connectTimeout) {
        this.connectTimeout = Optional.of(io.distlock.internal.Checks.positive(connectTimeout, "connectTimeout"));
        return this;
    }

    /** A backend option, as if given in the URI's query; see the backend's documentation for names and values. */
    public RemoteLockerBuilder option(String name, String value) {
        options.put(Objects.requireNonNull(name, "option name"), Objects.requireNonNull(value, "option value"));
        return this;
    }

    /** Uses this provider instead of discovering one by the URI's scheme. */
    public RemoteLockerBuilder provider(LockBackendProvider provider) {
        this.provider = Optional.of(Objects.requireNonNull(provider, "provider"));
        return this;
    }

    /**
     * The monotonic time source for deadlines and lease validity (default: {@link System#nanoTime()}). With a ticker
     * that moves only when told (for tests: {@link ManualTicker}), a {@code maxWait} passes only when the ticker is moved past it, and a waiter
     * of the {@code memory:} backend is woken by the next release on its key, not by moving the ticker.
     */
    public RemoteLockerBuilder ticker(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        return this;
    }

    /** The wall clock for {@link RemoteLock#validUntil()} and wall-clock based algorithms (default: UTC system). */
    public RemoteLockerBuilder clock(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        return this;
    }

    /**
     * Where the {@link RemoteLock#onLost(java.util.function.Consumer)} listeners of this locker's locks and groups run
     * (default: one daemon thread of the locker's own, shut down with it). Listeners never run on the thread that
     * renews leases, so a slow listener delays no renewal; with a single-threaded executor a slow listener delays the
     * next listener. A listener given its own executor with {@link RemoteLock#onLost(java.util.function.Consumer,
     * Executor)} runs there instead.
     */
    public RemoteLockerBuilder listenerExecutor(Executor executor) {
        this.listenerExecutor = Optional.of(Objects.requireNonNull(executor, "executor"));
        return this;
    }

    /**
     * Reports what this locker's locks do to {@code observer} (default: {@link LockObserver#none()}): acquisitions and
     * their outcomes, renewals, losses and releases, for metrics and tracing. The {@code distlock-micrometer} module
     * gives one that records Micrometer meters and observations.
     */
    public RemoteLockerBuilder observer(LockObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
        return this;
    }

    /**
     * Who this locker is, for people and for other processes (default: this process's id and host, e.g. {@code
     * 4711@worker-7}): stored with every entry the locker writes, within each owner id, so that {@link
     * RemoteLocker#inspect(String)}, {@code lockctl locks} and the store's own tools show it. Give what an operator
     * needs to find the holder: a service and host name, a pod, a URL. Not a secret: anyone who can read the store
     * reads it.
     *
     * @throws IllegalArgumentException if null, blank, longer than {@value OwnerIds#MAX_LABEL_BYTES} bytes in UTF-8, or
     *     holding a control character
     */
    public RemoteLockerBuilder ownerLabel(String ownerLabel) {
        this.ownerLabel = OwnerIds.checkLabel(ownerLabel);
        return this;
    }

    /**
     * How little validity may be left, while a lock's renewals (or its session's keep-alive) are failing, before its
     * {@link RemoteLock#onAtRisk} listeners are told (default: a third of the lock's lease time). Renewals run every
     * third of the lease time, so with the default a lock whose renewals succeed is never at risk.
     *
     * @throws IllegalArgumentException if not positive
     */
    public RemoteLockerBuilder atRiskThreshold(Duration threshold) {
        this.atRiskThreshold = Optional.of(io.distlock.internal.Checks.positive(threshold, "atRiskThreshold"));
        return this;
    }

    /**
     * Keeps a key from everyone for {@code lockDelay} longer when its grant ends without a release — its holder
     * crashed, froze (a long GC pause, a {@code SIGSTOP}) or was cut off from the store and its lease ran out — while
     * a release, and {@link RemoteLocker#breakLock} (an administrator's decision), still free it at once (Consul's {@code lock-delay}). It gives a frozen holder
     * time to wake, see its lock lost and stop before the next holder writes. Zero, the default, is none. The same as
     * the URI option {@code lockDelay}. Only backends that declare {@link Capabilities.Operation#LOCK_DELAY} keep it;
     * on any other, {@link #build()} fails naming the backend. A delay also holds up a waiter queued behind a
     * crashed holder: keep it a small part of the lease.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if negative
     */
    public RemoteLockerBuilder lockDelay(Duration lockDelay) {
        Objects.requireNonNull(lockDelay, "lockDelay must not be null");
        if (lockDelay.isNegative()) {
            throw new IllegalArgumentException("lockDelay must not be negative, got " + DurationText.of(lockDelay));
        }
        this.lockDelay = Optional.of(lockDelay);
        return this;
    }

    /**
     * Opens the locker. Blocks until connected, at most for the connect timeout.
     *
     * @throws IllegalStateException if no URI was given
     * @throws LockConfigurationException if the URI is malformed, its scheme unknown, or an option unknown or malformed
     * @throws LockBackendException if the store cannot be reached in time
     */
    public RemoteLocker build() {
        if (uri == null) {
            throw new IllegalStateException("No URI given: call uri(...) before build(), e.g. uri(\"memory:\")");
        }
        return LockerFactory.open(
                uri,
                options,
                leaseTime,
                connectTimeout,
                lockDelay,
                provider,
                ticker,
                clock,
                listenerExecutor,
                observer,
                ownerLabel,
                atRiskThreshold);
    }
}
