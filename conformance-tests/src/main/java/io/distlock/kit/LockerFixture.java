package io.distlock.kit;

import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.DurationText;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The hooks through which the kit reaches the store under test. Only {@link #lockerUri()} is required; every other
 * hook has a default that a backend author overrides where the store needs it (longer leases on a slow store, extra
 * builder options, the session timeout of a session-based store, how other processes reach the store).
 *
 * <p>The kit opens and closes every locker and backend itself, one or more per test, and uses keys unique to each
 * test, so the store may be shared by all tests of a class.
 */
public interface LockerFixture {

    /**
     * The URI of the store under test, e.g. {@code etcd://127.0.0.1:2379/kit}. Without the {@code ttl} option: the
     * kit sets the lease time per test through {@link RemoteLockerBuilder#leaseTime}.
     */
    String lockerUri();

    /**
     * A builder for a locker on the store, without a lease time (the kit sets it). Override to add options or
     * settings; the default is {@code RemoteLockers.builder().uri(lockerUri())}.
     */
    default RemoteLockerBuilder lockerBuilder() {
        return RemoteLockers.builder().uri(lockerUri());
    }

    /** Opens a locker with {@code leaseTime}; blocks until connected. */
    default RemoteLocker openLocker(Duration leaseTime) {
        return lockerBuilder().leaseTime(leaseTime).build();
    }

    /**
     * The provider of the backend under test. The default finds it by the scheme of {@link #lockerUri()}, as {@link
     * RemoteLockers#open(String)} does.
     */
    default LockBackendProvider provider() {
        return RemoteLockers.provider(KitUris.scheme(lockerUri()));
    }

    /**
     * Opens the backend directly through the SPI, bypassing the locker (no renewal, no checks): for the tests of what
     * the store itself does with a lease nobody renews. The URI's query options are passed on as backend options.
     */
    default LockBackend openBackend(Duration leaseTime) {
        URI full = KitUris.parse(lockerUri());
        Map<String, String> options = new LinkedHashMap<>();
        String query = full.getRawQuery();
        if (query != null) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    options.put(
                            URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        options.remove(BackendConfig.TTL);
        String connect = options.remove(BackendConfig.CONNECT_TIMEOUT);
        String text = full.toString();
        URI bare = query == null ? full : URI.create(text.substring(0, text.indexOf('?')));
        BackendConfig config = new BackendConfig(
                bare,
                options,
                leaseTime,
                connect == null ? Duration.ofSeconds(10) : DurationText.parseOption("connectTimeout", connect),
                Ticker.system(),
                Clock.systemUTC());
        return provider().open(config);
    }

    /** The lease time of the tests that do not exercise expiry: long enough that renewal is never late. */
    default Duration leaseTime() {
        return TestTimeouts.scaled(Duration.ofSeconds(5));
    }

    /**
     * The lease time of the expiry and loss tests: as short as the store can honour. Cassandra's TTLs count whole
     * seconds, so a Cassandra backend may need 2s or more.
     */
    default Duration shortLeaseTime() {
        return TestTimeouts.scaled(Duration.ofMillis(1000));
    }

    /**
     * How late after a lease's end the store may still report it held (TTL granularity, expiry sweeps, polling of
     * waiters). The expiry tests allow the lease time plus this.
     */
    default Duration expirySlack() {
        return TestTimeouts.scaled(Duration.ofSeconds(3));
    }

    /**
     * For {@link io.distlock.LeaseModel#SESSION} backends: how long after its holder died the store frees a lock
     * (the session timeout plus its detection). Unused by {@code RENEWED_TTL} backends.
     */
    default Duration sessionTimeout() {
        return shortLeaseTime();
    }

    /**
     * The bound every waiter of the starvation test must be served within, and the longest wait of any other test
     * that waits for a lock held by a test thread.
     */
    default Duration maxWait() {
        return TestTimeouts.scaled(Duration.ofSeconds(20));
    }

    /**
     * How many critical sections each thread runs in the contention tests. Lower it for a slow store; the tests
     * still make the threads contend on every acquisition.
     */
    default int acquisitionsPerThread() {
        return 25;
    }

    /**
     * A URI of this backend's scheme whose store cannot be reached (a closed port, say {@code zk://127.0.0.1:1/kit}),
     * for the test that opening fails within the connect timeout with a clear exception. Empty (the default) skips
     * that test, with this hook named in the reason.
     */
    default Optional<String> unreachableUri() {
        return Optional.empty();
    }

    /**
     * What the store holds for {@code key}, read directly from the store with the backend author's own client: one
     * line per entry (a lock record, a waiter's queue node, a lease), in any readable form. The kit checks with it
     * that nothing is left behind after a release, a failed {@code tryLock}, a timed-out wait and an interrupted wait,
     * right after the call, so the read must see every write the backend has completed: on a store whose replicas
     * may serve stale reads (a ZooKeeper follower), sync or read from the leader first. Empty (the default) when the
     * fixture cannot list entries: the kit then checks only that the key is free.
     */
    default Optional<List<String>> storeEntries(String key) {
        return Optional.empty();
    }

    /**
     * Faults injected into the store itself: stopping and starting it, deleting a lock entry out of band. Empty (the
     * default) skips the tests that need them ({@link StoreFaultContract}), with this hook named in the reason.
     */
    default Optional<StoreFaults> storeFaults() {
        return Optional.empty();
    }

    /**
     * Whether and how worker processes reach the store. The default hands them {@link #lockerUri()}; a store that
     * other processes cannot reach (the in-JVM {@code memory:} backend) answers {@link
     * MultiProcessSupport#unsupported} with the reason, and the multi-process tests are skipped with it.
     */
    default MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.uri(lockerUri());
    }

    /**
     * Where the read-write lock and semaphore contracts run instead, when another kit class of the same store and
     * backend runs them already (they run once per store): the reason, naming that class. Present, it skips every
     * test that needs {@link Need#READ_WRITE_LOCKS} or {@link Need#SEMAPHORES} here, with the reason. Empty (the
     * default): they run wherever the backend declares the kinds.
     */
    default Optional<String> kindsTestedElsewhere() {
        return Optional.empty();
    }

    /**
     * Where the inspection contracts ({@link InspectionContract}) run instead, when another kit class of the same store
     * and backend layout runs them already: the reason, naming that class. Present, it skips every test that needs
     * {@link Need#INSPECTION} or {@link Need#BREAK} here. Empty (the default): they run wherever the backend declares
     * the operations.
     */
    default Optional<String> operationsTestedElsewhere() {
        return Optional.empty();
    }
}
