package io.distlock.zookeeper;

import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;

/**
 * Lockers on a {@link CuratorFramework} the application already configured (its TLS, authentication, ACL provider,
 * retry policy and metrics), as Curator's own recipes take it.
 *
 * <pre>{@code
 * CuratorFramework client = ...; // started by the application
 * try (RemoteLocker locker = ZooKeeperLockers.using(client, "/locks").leaseTime(Duration.ofSeconds(20)).build()) {
 *     ...
 * }
 * client.close(); // the application's to close, after the locker
 * }</pre>
 *
 * <p>The locks are the client's ephemeral nodes, under {@code basePath} (relative to the client's namespace, if it has
 * one; a facade from {@code client.usingNamespace("app")} may be given too) in the same layout as the {@code zk://} backend's, so both exclude each other and Curator's {@code
 * InterProcessMutex} on the same paths. They are created with the client's own {@code ACLProvider} and under the
 * identity it authenticated with; the lease is the client's session (its session timeout, not the locker's lease
 * time). Closing the locker releases its locks, removes its connection-state listener and stops its threads; it never
 * closes the client.
 */
public final class ZooKeeperLockers {

    private ZooKeeperLockers() {}

    /**
     * A builder of lockers on {@code client}'s session, with their locks under {@code basePath}. The client must be
     * started; {@link RemoteLockerBuilder#build()} waits for its connection (at most the connect timeout) and checks
     * that the client may create and delete nodes under {@code basePath}. The options of the {@code zk://} URI that
     * the client already settles ({@code user}, {@code password}, {@code adminAcl}, {@code sessionTimeout} and the TLS
     * options) are refused.
     *
     * @param client the application's Curator client, started; never closed by the locker
     * @param basePath the parent of every key's lock node, e.g. {@code /locks}
     * @return a builder whose lease time, listener executor, observer and other settings still apply
     * @throws io.distlock.LockConfigurationException if {@code basePath} is invalid or reserved by ZooKeeper
     */
    public static RemoteLockerBuilder using(CuratorFramework client, String basePath) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(basePath, "basePath");
        ZkLocation location = ZkLocation.ofClient(client.getZookeeperClient().getCurrentConnectionString(), basePath);
        String hosts = location.connectString().isEmpty() ? "application-client" : location.connectString();
        return RemoteLockers.builder()
                .uri("zk://" + hosts + location.basePath())
                .provider(new ApplicationClientProvider(client, location));
    }
}
