package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.EtcdCluster;
import io.distlock.toolkit.OwnerIds;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the etcd backend's own tests on one member share: lockers and backends under {@link #PREFIX} on the test class's
 * etcd, and a client, the inspector, that reads their keys and deletes keys or revokes leases behind their backs.
 */
abstract class OneMemberEtcdTests {

    static final String PREFIX = "/locktest";

    /** Reads the lock keys, and deletes keys or revokes leases behind the lockers' backs; one per test. */
    Client inspector;

    /** The test class's etcd: one member. */
    abstract EtcdCluster etcd();

    @BeforeEach
    void connectInspector() {
        inspector = Client.builder()
                .endpoints(etcd().clientEndpoints().toArray(String[]::new))
                .build();
    }

    @AfterEach
    void closeInspector() {
        inspector.close();
    }

    static Duration maxWait() {
        return TestTimeouts.scaled(Duration.ofSeconds(20));
    }

    RemoteLocker locker(EtcdLockMode mode, Duration ttl) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(etcd(), PREFIX) + "?mode=" + mode.optionValue())
                .leaseTime(ttl)
                .build();
    }

    RemoteLocker proxiedLocker(EtcdLockMode mode, Duration ttl) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.proxiedUri(etcd(), PREFIX) + "?mode=" + mode.optionValue())
                .leaseTime(ttl)
                .build();
    }

    static LockBackend backend(EtcdLockMode mode, String uri, Duration ttl) {
        return backend(mode, uri, ttl, Duration.ofSeconds(10));
    }

    /**
     * A backend whose connect timeout is {@code connectTimeout}: also the outage limit of parked waits, which probe
     * etcd after half of it without an answer.
     */
    static LockBackend backend(EtcdLockMode mode, String uri, Duration ttl, Duration connectTimeout) {
        BackendConfig config = new BackendConfig(
                URI.create(uri),
                Map.of(EtcdLockBackendProvider.MODE, mode.optionValue()),
                ttl,
                connectTimeout,
                Ticker.system(),
                Clock.systemUTC());
        return new EtcdLockBackendProvider().open(config);
    }

    static LockRequest request(String key, Duration ttl) {
        return new LockRequest(key, OwnerIds.next(), ttl, reason -> {});
    }

    /** Every etcd key under the test prefix, with its value. */
    Map<String, KeyValue> keysUnder(String prefix) throws Exception {
        return inspector
                .getKVClient()
                .get(bytes(prefix), GetOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS)
                .getKvs()
                .stream()
                .collect(Collectors.toMap(kv -> kv.getKey().toString(StandardCharsets.UTF_8), kv -> kv));
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String lockPrefix(EtcdLockMode mode, String key) {
        return PREFIX + "/" + KeyCodec.encode(key) + (mode == EtcdLockMode.FAIR ? "/" : "");
    }

    void assertNothingLeft(EtcdLockMode mode, String key, String after) throws Exception {
        assertThat(keysUnder(lockPrefix(mode, key)))
                .as("etcd keys of '%s' after %s", key, after)
                .isEmpty();
    }

    /** Waits until lock {@code key} has {@code count} etcd keys; fails with {@code what} after {@link #maxWait()}. */
    void awaitKeyCount(EtcdLockMode mode, String key, int count, String what) {
        Deadlines.await(
                () -> {
                    try {
                        return keysUnder(lockPrefix(mode, key)).size() == count;
                    } catch (Exception e) {
                        return false;
                    }
                },
                maxWait(),
                () -> what);
    }

    /** A locker whose jetcd client passes every request through {@code interceptor}. */
    RemoteLocker interceptedLocker(String query, Duration ttl, DelayingInterceptor interceptor) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(etcd(), PREFIX) + query)
                .provider(new EtcdLockBackendProvider(client -> client.interceptor(interceptor)))
                .leaseTime(ttl)
                .build();
    }

    /** How many leases etcd has: its {@code LeaseLeases} call, through the member's JSON gateway (jetcd lacks it). */
    int leasesInEtcd() throws Exception {
        java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(
                                        URI.create("http://" + etcd().node(0).endpoint() + "/v3/lease/leases"))
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        return response.body().split("\"ID\"", -1).length - 1;
    }

    String leasesCount() {
        try {
            return String.valueOf(leasesInEtcd());
        } catch (Exception e) {
            return e.toString();
        }
    }
}
