package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Says in a user's words why ZooKeeper refused the client under the base path: authentication failed, permission
 * denied, or an ACL the server refuses. Messages never hold a password: identities are shown by {@link
 * ZkCredentials#describe}, which drops a digest's hash.
 */
final class ZkFailures {

    private ZkFailures() {}

    /** The server refused the ACL of the nodes under {@code basePath} ({@code InvalidACL}). */
    static LockBackendException invalidAcl(String connectString, String basePath, KeeperException cause) {
        return new LockBackendException(
                "ZooKeeper at " + connectString + " refused the ACL of the lock nodes "
                        + "under " + basePath + " as invalid: check option '" + ZooKeeperLockOptions.ADMIN_ACL
                        + "' (scheme:id, with a scheme the server knows, e.g. digest:admin:<base64 sha1>)",
                cause);
    }

    /**
     * Why the server refused the probe under {@code basePath} with {@code NoAuth}: authentication failed (the base
     * path's ACL names this digest user with another password) or permission denied, with the ACL the base path grants.
     *
     * @param anonymous who the client is, for the message, when distlock holds no credentials of its own
     */
    static LockBackendException refused(
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
                                + " was created for (" + granted + "); check option '"
                                + ZooKeeperLockOptions.PASSWORD + "'",
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
