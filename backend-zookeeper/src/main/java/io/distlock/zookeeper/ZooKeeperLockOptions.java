package io.distlock.zookeeper;

import io.distlock.RemoteLockerBuilder;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The ZooKeeper backend's options, typed: the equivalent of writing them into the URI's query. Not thread-safe.
 *
 * <pre>{@code
 * RemoteLocker locker = ZooKeeperLockOptions.create()
 *         .sessionTimeout(Duration.ofSeconds(15))
 *         .user("locker")
 *         .passwordFile(Path.of("/run/secrets/zk-password"))
 *         .applyTo(RemoteLockers.builder().uri("zk://zk1:2181,zk2:2181,zk3:2181/locks"))
 *         .build();
 * }</pre>
 *
 * is the same as {@code RemoteLockers.open("zk://zk1:2181,zk2:2181,zk3:2181/locks?sessionTimeout=PT15S&user=locker"
 * + "&passwordFile=/run/secrets/zk-password")}. Values are checked when the locker opens, as those from a URI are. The
 * lease time ({@code ttl}) and the connect timeout are common to all backends: set them with {@link
 * RemoteLockerBuilder#leaseTime} and {@link RemoteLockerBuilder#connectTimeout}. A locker on the application's own
 * client ({@link ZooKeeperLockers#using}) refuses the options that client already settles: all of these but {@link
 * #tickTime}.
 */
public final class ZooKeeperLockOptions {

    /**
     * Option {@value}: the ZooKeeper session timeout to ask for; default the locker's lease time. The server bounds it
     * by its {@code minSessionTimeout}/{@code maxSessionTimeout} (by default 2 to 20 ticks); the timeout it grants is
     * the lease of every lock: how long the locks of a crashed or cut-off holder stay held.
     */
    public static final String SESSION_TIMEOUT = "sessionTimeout";

    /**
     * Option {@value}: the ensemble's {@code tickTime}; default ZooKeeper's default of 3 s, or half the session timeout
     * if less (the largest tick that timeout allows with ZooKeeper's default {@code minSessionTimeout} of two ticks). A
     * lock's validity counts a heartbeat once the leader has surely heard of it, half a tick after its answer: give the
     * ensemble's tick if it is longer than that (the validity would otherwise be too generous), or to confirm sooner.
     */
    public static final String TICK_TIME = "tickTime";

    /** Option {@value}: the ZooKeeper digest user the locker authenticates as; needs a password. */
    public static final String USER = "user";

    /**
     * Option {@value}: the digest user's password; or {@code passwordFile} (the first line of a file) or {@code
     * passwordEnv} (an environment variable).
     */
    public static final String PASSWORD = "password";

    /**
     * Option {@value}: further ids granted everything on the nodes the locker creates, {@code
     * scheme:id[,scheme:id...]}, e.g. {@code digest:admin:<base64 sha1>} or {@code sasl:admin}; needs {@link #USER}
     * and {@link #PASSWORD}.
     */
    public static final String ADMIN_ACL = "adminAcl";

    private final Map<String, String> options = new LinkedHashMap<>();

    private ZooKeeperLockOptions() {}

    /** No options set: every one at its default. */
    public static ZooKeeperLockOptions create() {
        return new ZooKeeperLockOptions();
    }

    /** Option {@value #SESSION_TIMEOUT}: the session timeout to ask the servers for; default the lease time. */
    public ZooKeeperLockOptions sessionTimeout(Duration timeout) {
        options.put(SESSION_TIMEOUT, DurationText.of(Objects.requireNonNull(timeout, "sessionTimeout")));
        return this;
    }

    /** Option {@value #TICK_TIME}: the ensemble's {@code tickTime}, when it is not ZooKeeper's default of 3 s. */
    public ZooKeeperLockOptions tickTime(Duration tick) {
        options.put(TICK_TIME, DurationText.of(Objects.requireNonNull(tick, "tickTime")));
        return this;
    }

    /**
     * Option {@value #USER}: the digest user the locker authenticates as, with one of {@link #password}, {@link
     * #passwordFile} or {@link #passwordEnv}. The nodes the locker creates then grant everything to that identity (and
     * the {@link #adminAcl} ids), READ to anyone else.
     */
    public ZooKeeperLockOptions user(String user) {
        options.put(USER, Objects.requireNonNull(user, "user"));
        return this;
    }

    /** Option {@value #PASSWORD}: the digest user's password; never shown by {@link #toString()}. */
    public ZooKeeperLockOptions password(String password) {
        options.put(PASSWORD, Objects.requireNonNull(password, "password"));
        return this;
    }

    /** Option {@code passwordFile}: a file whose first line is the digest user's password. */
    public ZooKeeperLockOptions passwordFile(Path file) {
        options.put(PASSWORD + "File", Objects.requireNonNull(file, "file").toString());
        return this;
    }

    /** Option {@code passwordEnv}: the environment variable that holds the digest user's password. */
    public ZooKeeperLockOptions passwordEnv(String variable) {
        options.put(PASSWORD + "Env", Objects.requireNonNull(variable, "variable"));
        return this;
    }

    /**
     * Option {@value #ADMIN_ACL}: further ids granted everything on the locker's nodes, each {@code scheme:id}, e.g.
     * {@code digest:admin:<base64 sha1 of admin:password>}.
     */
    public ZooKeeperLockOptions adminAcl(String... ids) {
        Objects.requireNonNull(ids, "ids");
        for (String id : ids) {
            Objects.requireNonNull(id, "id");
        }
        options.put(ADMIN_ACL, String.join(",", ids));
        return this;
    }

    /** Option {@code tls}: connects to the servers' {@code secureClientPort} over TLS (default false). */
    public ZooKeeperLockOptions tls(boolean tls) {
        options.put(TlsSettings.TLS, Boolean.toString(tls));
        return this;
    }

    /** Option {@code caFile}: the PEM authorities that signed the servers' certificates; turns TLS on. */
    public ZooKeeperLockOptions caFile(Path file) {
        options.put(TlsSettings.TLS, "true");
        options.put(TlsSettings.CA_FILE, Objects.requireNonNull(file, "file").toString());
        return this;
    }

    /**
     * Options {@code certFile} and {@code keyFile}: the PEM client certificate and its unencrypted PKCS#8 PEM key, for
     * servers that ask for one; turns TLS on.
     */
    public ZooKeeperLockOptions clientCertificate(Path certFile, Path keyFile) {
        options.put(TlsSettings.TLS, "true");
        options.put(
                TlsSettings.CERT_FILE,
                Objects.requireNonNull(certFile, "certFile").toString());
        options.put(
                TlsSettings.KEY_FILE, Objects.requireNonNull(keyFile, "keyFile").toString());
        return this;
    }

    /** Option {@code verifyHost}: whether the server's certificate must name the host connected to (default true). */
    public ZooKeeperLockOptions verifyHost(boolean verify) {
        options.put(TlsSettings.VERIFY_HOST, Boolean.toString(verify));
        return this;
    }

    /**
     * Sets these options on {@code builder}, as {@link RemoteLockerBuilder#option} would.
     *
     * @return {@code builder}
     */
    public RemoteLockerBuilder applyTo(RemoteLockerBuilder builder) {
        Objects.requireNonNull(builder, "builder");
        options.forEach(builder::option);
        return builder;
    }

    /** The options set, the password shown as {@code ****}. */
    @Override
    public String toString() {
        Map<String, String> shown = new LinkedHashMap<>(options);
        shown.computeIfPresent(PASSWORD, (name, value) -> "****");
        return "ZooKeeperLockOptions" + shown;
    }
}
