package io.distlock.etcd;

import io.distlock.RemoteLockers;
import io.distlock.kit.ClientPartition;
import io.distlock.kit.NodeFaults;
import io.distlock.kit.StoreFaults;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.KitFaults;
import io.distlock.testing.ServerNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The kit's store faults on an {@link EtcdCluster}: every member stopped and started again, a lock's key deleted with a
 * client of its own, as {@code etcdctl del} (with {@code --prefix} in fair mode) would, single members killed or frozen
 * (the members are processes of their own; a majority serves), and lockers cut off through the members' proxies.
 */
final class EtcdStoreFaults implements StoreFaults {

    /**
     * The holder watches its own key (created synced at most 200 ms after the grant, by the locker's deferred pass) and
     * is told by the deletion's event, or by the check when the watch starts; the rest is the way to the listener's
     * executor.
     */
    static final Duration NOTICED_WITHIN = Duration.ofMillis(500);

    private final EtcdCluster etcd;
    private final String prefix;
    private final EtcdLockMode mode;

    EtcdStoreFaults(EtcdCluster etcd, String prefix, EtcdLockMode mode) {
        this.etcd = etcd;
        this.prefix = prefix;
        this.mode = mode;
    }

    @Override
    public void stopStore() {
        etcd.nodes().forEach(ServerNode::stop);
    }

    @Override
    public void startStore() {
        etcd.resetFaults();
    }

    /** Deletes the lock's key (cas) or every queue key of the lock (fair: the kit deletes only where nobody waits). */
    @Override
    public void deleteLockEntry(String key) {
        String name = prefix + "/" + KeyCodec.encode(key) + (mode == EtcdLockMode.FAIR ? "/" : "");
        try (Client operator = Client.builder()
                .endpoints(etcd.clientEndpoints().toArray(String[]::new))
                .build()) {
            long deleted = operator.getKVClient()
                    .delete(
                            ByteSequence.from(name, StandardCharsets.UTF_8),
                            DeleteOption.builder()
                                    .isPrefix(mode == EtcdLockMode.FAIR)
                                    .build())
                    .get(10, TimeUnit.SECONDS)
                    .getDeleted();
            if (deleted == 0) {
                throw new IllegalStateException("No etcd key " + name + (mode == EtcdLockMode.FAIR ? "*" : "")
                        + " of lock '" + key + "' to delete");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted deleting the etcd key of '" + key + "'", e);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot delete the etcd key of '" + key + "'", e);
        }
    }

    @Override
    public Duration deletionNoticedWithin() {
        return NOTICED_WITHIN;
    }

    /** The members, a majority of which must serve (one member has no minority to lose: the kit says so). */
    @Override
    public Optional<NodeFaults> nodeFaults() {
        List<ServerNode> members = etcd.nodes();
        return Optional.of(KitFaults.nodes(members, KitFaults.majority(members), etcd::resetFaults));
    }

    /** Lockers on every member's proxy, in the same mode. */
    @Override
    public Optional<ClientPartition> clientPartition() {
        return Optional.of(KitFaults.partition(etcd.nodes(), () -> RemoteLockers.builder()
                .uri(EtcdTesting.proxiedUri(etcd, prefix) + "?mode=" + mode.optionValue())));
    }
}
