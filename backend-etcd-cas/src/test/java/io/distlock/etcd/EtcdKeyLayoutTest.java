package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A lock's etcd key: one name segment under the prefix whatever the lock key holds, the fencing token its create
 * revision.
 */
class EtcdKeyLayoutTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void keys_withSlashSpaceAndNonAscii_mapToOneNameSegment(EtcdLockMode mode) throws Exception {
        String base = EtcdTesting.unique("map");
        String key = base + "/счёт 42 %";
        try (RemoteLocker locker = locker(mode, TestTimeouts.scaled(Duration.ofSeconds(5)));
                RemoteLock parent = locker.lock(base, maxWait());
                RemoteLock lock = locker.lock(key, maxWait())) {
            assertTrue(parent.isHeld() && lock.isHeld(), "a key and the key with '/...' appended are different locks");
            Map<String, KeyValue> keys = keysUnder(PREFIX + "/" + base);
            String name = PREFIX + "/" + base + "%2Fсчёт 42 %25";
            List<String> ours =
                    keys.keySet().stream().filter(k -> k.startsWith(name)).collect(Collectors.toList());
            assertEquals(1, ours.size(), "etcd keys of '" + key + "': " + keys.keySet());
            String etcdKey = ours.get(0);
            if (mode == EtcdLockMode.FAIR) {
                assertThat(etcdKey).matches(java.util.regex.Pattern.quote(name + "/") + "[0-9a-f]+");
            } else {
                assertThat(etcdKey).isEqualTo(name);
            }
            KeyValue kv = keys.get(etcdKey);
            assertEquals(
                    kv.getCreateRevision(),
                    lock.fencingToken().orElseThrow(),
                    "fencing token = the owner key's create revision");
            assertEquals(KeyCodec.decode(name.substring(PREFIX.length() + 1)), key);
        }
        assertThat(keysUnder(PREFIX + "/" + base)).as("after release").isEmpty();
    }
}
