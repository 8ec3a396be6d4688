package io.distlock.zookeeper;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Secret;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * The locker's ZooKeeper identity (digest authentication, options {@code user} and {@code password}) and the ACL its
 * nodes are created with: everything for that identity and for the {@code adminAcl} ids, at most READ for anyone else.
 * ZooKeeper checks a delete against the parent's ACL, so the parents distlock creates (the base path and each key's
 * node) carry the same ACL: nobody else can delete a lock node. The base path's own parents, when distlock creates
 * them, are left open, as ZooKeeper creates them for any client: they may be shared with other identities. The password shows nowhere ({@link #toString()} names
 * the user only).
 */
final class ZkCredentials {

    private static final String DIGEST = "digest";

    private final String user;
    private final Secret password;
    private final Id identity;
    private final List<ACL> acl;

    private ZkCredentials(String user, Secret password, List<Id> admins) {
        this.user = user;
        this.password = password;
        this.identity = new Id(DIGEST, digest(user, password));
        List<ACL> list = new ArrayList<>();
        list.add(new ACL(ZooDefs.Perms.ALL, identity));
        admins.forEach(admin -> list.add(new ACL(ZooDefs.Perms.ALL, admin)));
        list.add(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        // not List.copyOf: ZooKeeper checks the list with contains(null), which immutable lists refuse
        this.acl = Collections.unmodifiableList(list);
    }

    /**
     * Reads options {@code user}, {@code password} and {@code adminAcl}: empty when none is given.
     *
     * @throws LockConfigurationException if {@code user} comes without a password or the reverse, or {@code
     *     adminAcl} without them or malformed
     */
    static Optional<ZkCredentials> read(BackendConfig config) {
        Optional<String> user = config.option(ZooKeeperLockOptions.USER);
        Optional<Secret> password = config.secretOption(ZooKeeperLockOptions.PASSWORD);
        Optional<String> admins = config.option(ZooKeeperLockOptions.ADMIN_ACL);
        if (user.isEmpty() && password.isEmpty()) {
            if (admins.isPresent()) {
                throw new LockConfigurationException("Option '" + ZooKeeperLockOptions.ADMIN_ACL + "' needs options '"
                        + ZooKeeperLockOptions.USER + "' and '" + ZooKeeperLockOptions.PASSWORD
                        + "': without them lock nodes are created open to everyone");
            }
            return Optional.empty();
        }
        if (user.isEmpty() || user.get().isBlank()) {
            throw new LockConfigurationException("Option '" + ZooKeeperLockOptions.PASSWORD + "' needs option '"
                    + ZooKeeperLockOptions.USER + "': the ZooKeeper digest user the password belongs to");
        }
        if (user.get().contains(":")) {
            throw new LockConfigurationException("Option '" + ZooKeeperLockOptions.USER
                    + "' must not contain ':' (ZooKeeper digest credentials are user:password)");
        }
        if (password.isEmpty()) {
            throw new LockConfigurationException("Option '" + ZooKeeperLockOptions.USER + "' needs option '"
                    + ZooKeeperLockOptions.PASSWORD + "' (or '" + ZooKeeperLockOptions.PASSWORD + "File' / '"
                    + ZooKeeperLockOptions.PASSWORD + "Env'): digest authentication takes both");
        }
        return Optional.of(new ZkCredentials(
                user.get(), password.get(), admins.map(ZkCredentials::parseIds).orElse(List.of())));
    }

    private static List<Id> parseIds(String text) {
        List<Id> ids = new ArrayList<>();
        for (String part : text.split(",")) {
            String id = part.trim();
            int colon = id.indexOf(':');
            if (colon <= 0 || colon == id.length() - 1) {
                throw new LockConfigurationException("Option '" + ZooKeeperLockOptions.ADMIN_ACL + "': '" + id
                        + "' is not an id; expected scheme:id[,scheme:id...], e.g. digest:admin:<base64 sha1 of"
                        + " admin:password> or sasl:admin");
            }
            ids.add(new Id(id.substring(0, colon), id.substring(colon + 1)));
        }
        return ids;
    }

    private static String digest(String user, Secret password) {
        try {
            return DigestAuthenticationProvider.generateDigest(user + ":" + password.reveal());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("This JVM offers no SHA-1, which ZooKeeper's digest scheme needs", e);
        }
    }

    /** The digest user. */
    String user() {
        return user;
    }

    /** The identity the lock nodes are created for, {@code digest:<user>:<hash>}. */
    Id identity() {
        return identity;
    }

    /** What the client sends to authenticate, at every connection. */
    AuthInfo authInfo() {
        return new AuthInfo(DIGEST, (user + ":" + password.reveal()).getBytes(StandardCharsets.UTF_8));
    }

    /** The ACL of every node distlock creates. */
    List<ACL> acl() {
        return acl;
    }

    /**
     * Gives {@link #acl()} to every node the client creates at or under {@code basePath}; the parents of the base path
     * that it creates get ZooKeeper's open ACL, as any client's would, so that a shared parent such as {@code
     * /services} is not closed to the other identities that use it.
     */
    ACLProvider aclProvider(String basePath) {
        String below = basePath.endsWith("/") ? basePath : basePath + "/";
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return acl;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                return path.equals(basePath) || path.startsWith(below) ? acl : ZooDefs.Ids.OPEN_ACL_UNSAFE;
            }
        };
    }

    /** An id for a message: its scheme and user, never a digest's hash. */
    static String describe(Id id) {
        if (DIGEST.equals(id.getScheme())) {
            int colon = id.getId().indexOf(':');
            return DIGEST + ":" + (colon < 0 ? id.getId() : id.getId().substring(0, colon));
        }
        return id.getScheme() + ":" + id.getId();
    }

    /** {@code digest user '<user>'}: never the password. */
    @Override
    public String toString() {
        return "digest user '" + user + "'";
    }
}
