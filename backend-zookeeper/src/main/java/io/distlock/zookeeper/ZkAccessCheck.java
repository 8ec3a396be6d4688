package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import java.util.Optional;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * Checks at opening that the client may lock under the base path: creates and deletes one ephemeral node there. A
 * ZooKeeper digest login never fails by itself (a wrong password is just another identity), so without this check a
 * wrong password or a missing permission would surface only at the first lock. With credentials, the base path is
 * created persistent with their ACL when missing, so that it stays theirs (a container would be reaped once empty and
 * could then be re-created by anyone). What a refusal means is worded by {@link ZkFailures}.
 */
final class ZkAccessCheck {

    /** Never a key's node name: {@link KeyCodec} escapes {@code '@'}. */
    private static final String PROBE_PREFIX = "@distlock-access-check-";

    private ZkAccessCheck() {}

    /**
     * Creates and deletes a probe node under {@code basePath}.
     *
     * @param anonymous who the client is, for the message, when distlock holds no credentials of its own
     *
     * @throws LockBackendException naming the cause: authentication failed (the base path is another password's),
     *     permission denied on the base path, or an ACL the server refuses
     * @throws Exception any other failure of the client, for the caller to report
     */
    static void run(
            CuratorFramework client,
            String connectString,
            String basePath,
            Optional<ZkCredentials> credentials,
            String anonymous)
            throws Exception {
        String probe = ZKPaths.makePath(basePath, PROBE_PREFIX + UUID.randomUUID());
        try {
            if (credentials.isPresent()) {
                try {
                    client.create().creatingParentsIfNeeded().forPath(basePath);
                } catch (KeeperException.NodeExistsException e) {
                    // created before, by us or an administrator: its ACL decides, checked next
                }
            }
            client.create()
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath(probe);
            client.delete().forPath(probe);
        } catch (KeeperException.NoAuthException e) {
            throw ZkFailures.refused(client, connectString, basePath, credentials, anonymous, e);
        } catch (KeeperException.InvalidACLException e) {
            throw ZkFailures.invalidAcl(connectString, basePath, e);
        }
    }
}
