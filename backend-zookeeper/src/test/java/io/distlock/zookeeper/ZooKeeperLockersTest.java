package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.testing.ZooKeeperEnsemble;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Lockers on the application's own Curator client: closing them leaves it open, options it settles are refused. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ZooKeeperLockersTest {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private static CuratorFramework started() throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
        return client;
    }

    private static int connectionListeners(CuratorFramework client) {
        return ((StandardListenerManager<?>) client.getConnectionStateListenable()).size();
    }

    @Test
    void close_leavesTheClientOpenAndUsable_andRemovesTheLockersListener() throws Exception {
        try (CuratorFramework client = started()) {
            int listenersBefore = connectionListeners(client);
            int eventListenersBefore = ((StandardListenerManager<?>) client.getCuratorListenable()).size();
            long session = client.getZookeeperClient().getZooKeeper().getSessionId();
            RemoteLocker locker = ZooKeeperLockers.using(client, "/own").build();
            assertThat(connectionListeners(client)).isEqualTo(listenersBefore + 1);
            RemoteLock lock = locker.tryLock("k").orElseThrow();
            assertThat(lock.isHeld()).isTrue();
            locker.close();

            assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
            assertThat(client.getZookeeperClient().isConnected()).isTrue();
            assertThat(client.getZookeeperClient().getZooKeeper().getSessionId())
                    .isEqualTo(session);
            assertThat(connectionListeners(client)).isEqualTo(listenersBefore);
            assertThat(((StandardListenerManager<?>) client.getCuratorListenable()).size())
                    .as("the locker's event listener (it counts disconnections) removed")
                    .isEqualTo(eventListenersBefore);
            client.create().forPath("/after-close", "still usable".getBytes(StandardCharsets.UTF_8));
            assertThat(new String(client.getData().forPath("/after-close"), StandardCharsets.UTF_8))
                    .isEqualTo("still usable");
            InterProcessMutex mutex = new InterProcessMutex(client, ZKPaths.makePath("/own", KeyCodec.encode("k")));
            assertThat(mutex.acquire(5, TimeUnit.SECONDS))
                    .as("the locker's lock was released on close, in the shared session")
                    .isTrue();
            mutex.release();
        }
    }

    @Test
    void lock_onTheApplicationsClient_usesItsAcl_andExcludesAUriLockerOfTheSameIdentity() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .retryPolicy(new RetryOneTime(100))
                        .authorization("digest", "app:app-pass".getBytes(StandardCharsets.UTF_8))
                        .aclProvider(new org.apache.curator.framework.imps.DefaultACLProvider() {
                            @Override
                            public java.util.List<org.apache.zookeeper.data.ACL> getDefaultAcl() {
                                return ZooDefs.Ids.CREATOR_ALL_ACL;
                            }

                            @Override
                            public java.util.List<org.apache.zookeeper.data.ACL> getAclForPath(String path) {
                                return ZooDefs.Ids.CREATOR_ALL_ACL;
                            }
                        })
                        .build();
                RemoteLocker own = startedLocker(client, "/app-acl");
                RemoteLocker byUri = io.distlock.RemoteLockers.open(
                        "zk://" + ZK.connectString() + "/app-acl?user=app&password=app-pass")) {
            RemoteLock held = own.tryLock("shared").orElseThrow();
            assertThat(byUri.tryLock("shared")).isEmpty();
            String keyPath = ZKPaths.makePath("/app-acl", KeyCodec.encode("shared"));
            String node = ZKPaths.makePath(
                    keyPath, client.getChildren().forPath(keyPath).get(0));
            assertThat(client.getACL().forPath(node))
                    .extracting(a -> a.getId().getScheme())
                    .containsExactly("digest");
            held.release();
        }
    }

    static RemoteLocker startedLocker(CuratorFramework client, String basePath) throws InterruptedException {
        client.start();
        client.blockUntilConnected();
        // the servers' tick, so that opening confirms the session in half of it (the close test opens with the default)
        return ZooKeeperLockers.using(client, basePath)
                .option(ZooKeeperLockOptions.TICK_TIME, ZooKeeperEnsemble.TICK.toMillis() + "ms")
                .build();
    }

    @Test
    void tryLock_onAClientThatRepeatsALostCreate_deletesTheFirstCopy_andGetsTheLock() throws Exception {
        AtomicBoolean lostOnce = new AtomicBoolean();
        // The first lock node create succeeds on the server but reports a lost connection: the client's own retry
        // policy then creates a second node, as Curator does for an application's client.
        ZookeeperFactory losingFirstReply = (connect, sessionMs, watcher, canBeReadOnly) ->
                new ZooKeeper(connect, sessionMs, watcher, canBeReadOnly) {
                    @Override
                    public String create(String path, byte[] data, List<ACL> acl, CreateMode mode, Stat stat, long ttl)
                            throws KeeperException, InterruptedException {
                        String created = super.create(path, data, acl, mode, stat, ttl);
                        if (mode == CreateMode.EPHEMERAL_SEQUENTIAL && lostOnce.compareAndSet(false, true)) {
                            throw new KeeperException.ConnectionLossException();
                        }
                        return created;
                    }
                };
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .retryPolicy(new RetryOneTime(10))
                        .zookeeperFactory(losingFirstReply)
                        .build();
                RemoteLocker locker = startedLocker(client, "/retrying")) {
            RemoteLock lock =
                    locker.tryLock("k").orElseThrow(() -> new AssertionError("blocked by our own first node"));
            assertThat(lostOnce).isTrue();
            assertThat(client.getChildren().forPath(ZKPaths.makePath("/retrying", "k")))
                    .hasSize(1);
            lock.release();
        }
    }

    @Test
    void release_failingWithAnErrorOtherThanConnectionLoss_deletesTheNodeInTheBackground() throws Exception {
        AtomicBoolean refusedOnce = new AtomicBoolean();
        // The first delete of a lock node is sent with a version the node does not have: the server refuses it with
        // BADVERSION, a KeeperException of a real call that is no connection loss (as SESSIONMOVED is not), and the
        // node stays.
        ZookeeperFactory refusingFirstDelete = (connect, sessionMs, watcher, canBeReadOnly) ->
                new ZooKeeper(connect, sessionMs, watcher, canBeReadOnly) {
                    @Override
                    public void delete(String path, int version) throws InterruptedException, KeeperException {
                        boolean lockNode = path.startsWith("/refused/k/");
                        super.delete(
                                path,
                                lockNode && refusedOnce.compareAndSet(false, true) ? Integer.MAX_VALUE - 1 : version);
                    }
                };
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .retryPolicy(new RetryOneTime(10))
                        .zookeeperFactory(refusingFirstDelete)
                        .build();
                RemoteLocker locker = startedLocker(client, "/refused");
                CuratorFramework other = started()) {
            RemoteLock lock = locker.tryLock("k").orElseThrow();
            assertThatThrownBy(lock::release)
                    .isInstanceOf(io.distlock.LockBackendException.class)
                    .hasMessageContaining("BadVersion")
                    .hasMessageContaining("deleted in the background");
            assertThat(refusedOnce).isTrue();
            Conditions.await(
                    "the refused lock node deleted in the background, in the same session",
                    Duration.ofSeconds(5),
                    () -> {
                        try {
                            return other.getChildren().forPath("/refused/k").isEmpty();
                        } catch (KeeperException.NoNodeException reaped) {
                            return true; // the key's container node, reaped by the server once empty
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
            InterProcessMutex mutex = new InterProcessMutex(other, "/refused/k");
            assertThat(mutex.acquire(0, TimeUnit.SECONDS)).isTrue();
            mutex.release();
        }
    }

    @Test
    void lock_onANamespacedClient_keepsItsNodesInTheNamespace() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .namespace("app")
                        .retryPolicy(new RetryOneTime(100))
                        .build();
                RemoteLocker locker = startedLocker(client, "/ns-locks");
                CuratorFramework plain = started()) {
            // the same path outside the namespace, where a create that missed the namespace would succeed
            plain.create().creatingParentsIfNeeded().forPath("/ns-locks/k");
            // the first lock creates the key's parent nodes; the second joins a queue that exists
            for (int i = 0; i < 2; i++) {
                try (RemoteLock lock = locker.lock("k", Duration.ofSeconds(30))) {
                    List<String> nodes = plain.getChildren().forPath("/app/ns-locks/k");
                    assertThat(nodes).hasSize(1);
                    Stat node = plain.checkExists().forPath(ZKPaths.makePath("/app/ns-locks/k", nodes.get(0)));
                    assertThat(lock.fencingToken()).hasValue(node.getCzxid());
                }
                assertThat(plain.getChildren().forPath("/app/ns-locks/k")).isEmpty();
            }
            assertThat(plain.getChildren().forPath("/ns-locks/k")).isEmpty();
        }
    }

    @Test
    void lock_onAUsingNamespaceFacade_locksInTheNamespace_andCloseLeavesTheClientUsable() throws Exception {
        try (CuratorFramework client = started()) {
            int listenersBefore = connectionListeners(client);
            int eventListenersBefore = ((StandardListenerManager<?>) client.getCuratorListenable()).size();
            CuratorFramework app = client.usingNamespace("facade");
            try (RemoteLocker locker = ZooKeeperLockers.using(app, "/locks")
                    .option(ZooKeeperLockOptions.TICK_TIME, ZooKeeperEnsemble.TICK.toMillis() + "ms")
                    .build()) {
                try (RemoteLock lock = locker.lock("k", Duration.ofSeconds(30))) {
                    assertThat(client.getChildren().forPath("/facade/locks/k")).hasSize(1);
                    assertThat(lock.isHeld()).isTrue();
                }
                assertThat(client.getChildren().forPath("/facade/locks/k")).isEmpty();
            }
            assertThat(connectionListeners(client))
                    .as("the locker's listener removed from the shared client")
                    .isEqualTo(listenersBefore);
            assertThat(((StandardListenerManager<?>) client.getCuratorListenable()).size())
                    .as("the locker's event listener removed from the client the facade wraps")
                    .isEqualTo(eventListenersBefore);
            assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
            assertThat(app.checkExists().forPath("/locks")).isNotNull();
        }
    }

    @Test
    void build_withAnOptionTheClientSettles_isRefused() throws Exception {
        try (CuratorFramework client = started()) {
            assertThatThrownBy(() -> ZooKeeperLockers.using(client, "/own")
                            .option("user", "u")
                            .option("tls", "true")
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("[tls, user]")
                    .hasMessageContaining("configure them on the client");
            assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        }
    }

    @Test
    void build_onAClientNotStarted_isRefused() {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100))) {
            assertThatThrownBy(() -> ZooKeeperLockers.using(client, "/own").build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("LATENT")
                    .hasMessageContaining("start it");
        }
    }

    @Test
    void using_withZooKeepersOwnPath_isRefused() throws Exception {
        try (CuratorFramework client = started()) {
            assertThatThrownBy(() -> ZooKeeperLockers.using(client, "/zookeeper/locks"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("reserved by ZooKeeper");
        }
    }
}
