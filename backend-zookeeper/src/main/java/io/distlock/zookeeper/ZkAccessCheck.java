package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Checks at opening that the client may lock under the base path: creates and deletes one ephemeral node there. A
 * ZooKeeper digest login never fails by itself (a wrong password is just another identity), so without this check a
 * wrong password or a missing permission would surface only at the first lock. With credentials, the base path is
 * created persistent with their ACL when missing, so that it stays theirs (a container would be reaped once empty and
 * could then be re-created by anyone).
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
            throw refused(client, connectString, basePath, credentials, anonymous, e);
        } catch (KeeperException.InvalidACLException e) {
            throw new LockBackendException(
                    "ZooKeeper at " + connectString + " refused the ACL of the lock nodes "
                            + "under " + basePath + " as invalid: check option '" + ZkCredentials.ADMIN_ACL
                            + "' (scheme:id, with a scheme the server knows, e.g. digest:admin:<base64 sha1>)",
                    e);
        }
    }

    private static LockBackendException refused(
            CuratorFramework client,
            String connectString,
            String basePath,
            Optional<ZkCredentials> credentials,
            String anonymous,
            KeeperException cause) {
        List<ACL> acl = aclOf(client, basePath);
        String who = credentials.map(ZkCredentials::toString).orElse(anonymous);
        String granted = acl.isEmpty()
                ? "its ACL could not be read"
                : "its ACL grants "
                        + acl.stream()
                                .map(a -> ZkCredentials.describe(a.getId()) + " (" + perms(a.getPerms()) + ")")
                                .collect(Collectors.joining(", "));
        if (credentials.isPresent()) {
            ZkCredentials c = credentials.get();
            String mine = ZkCredentials.describe(c.identity());
            boolean otherPassword = acl.stream()
                    .anyMatch(a -> ZkCredentials.describe(a.getId()).equals(mine)
                            && !a.getId().equals(c.identity()));
            if (otherPassword) {
                return new LockBackendException(
                        "Authentication failed for ZooKeeper " + c + " at " + connectString
                                + ": the password does not match the one " + basePath
                                + " was created for (" + granted + "); check option 'password'",
                        cause);
            }
        }
        return new LockBackendException(
                "Permission denied on " + basePath + " at ZooKeeper " + connectString + " for " + who
                        + ": locking needs CREATE and DELETE there, and " + granted,
                cause);
    }

    private static List<ACL> aclOf(CuratorFramework client, String path) {
        try {
            return client.getACL().forPath(path);
        } catch (Exception e) {
            return List.of();
        }
    }

    private static String perms(int perms) {
        if (perms == ZooDefs.Perms.ALL) {
            return "ALL";
        }
        StringBuilder out = new StringBuilder();
        append(out, perms, ZooDefs.Perms.READ, "READ");
        append(out, perms, ZooDefs.Perms.WRITE, "WRITE");
        append(out, perms, ZooDefs.Perms.CREATE, "CREATE");
        append(out, perms, ZooDefs.Perms.DELETE, "DELETE");
        append(out, perms, ZooDefs.Perms.ADMIN, "ADMIN");
        return out.length() == 0 ? "none" : out.toString();
    }

    private static void append(StringBuilder out, int perms, int perm, String name) {
        if ((perms & perm) != 0) {
            out.append(out.length() == 0 ? "" : "|").append(name);
        }
    }
}
