package io.distlock.etcd;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.ShownText;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;

/**
 * Lockers on a jetcd {@link Client} the application already has, with its endpoints, TLS, credentials and
 * interceptors as the application configured them.
 *
 * <pre>{@code
 * Client client = Client.builder().endpoints("https://e1:2379").sslContext(ssl).user(user).password(pw).build();
 * try (RemoteLocker locker = EtcdLockers.using(client, "/locks").leaseTime(Duration.ofSeconds(15)).build()) {
 *     ...
 * }
 * client.close(); // the application's to close, after its lockers
 * }</pre>
 *
 * <p>The locker grants its own etcd lease on the client, keeps it alive and revokes it on close; closing the locker
 * closes the watches it opened but never the client. Options of the URI form apply ({@code mode}, {@code
 * operationTimeout}, {@code ttl}, {@code connectTimeout}), given through {@link RemoteLockerBuilder#option} or {@link
 * EtcdLockOptions}; the connection options ({@code user}, {@code password}, {@code tls}, {@code caFile}, {@code
 * certFile}, {@code keyFile}, {@code verifyHost}) are refused, as the client has its own. The client's own retry
 * settings stay as they are; distlock bounds every request by {@code operationTimeout} all the same.
 */
public final class EtcdLockers {

    private EtcdLockers() {}

    /**
     * A builder for lockers whose locks live under {@code prefix} and reach etcd through {@code client}; the URI the
     * locker reports is {@code etcd:<prefix>}. Nothing connects until {@link RemoteLockerBuilder#build()}, which
     * blocks until etcd granted the locker's lease (at most the connect timeout).
     *
     * @param client the application's client; not closed by the locker
     * @param prefix the key prefix of every lock, starting with {@code /}, e.g. {@code /locks}
     * @return a builder on which lease time, options, listener executor and observer may still be set
     * @throws LockConfigurationException if {@code prefix} does not start with {@code /} or has an empty segment
     */
    public static RemoteLockerBuilder using(Client client, String prefix) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(prefix, "prefix");
        if (!prefix.startsWith("/")) {
            throw new LockConfigurationException(
                    "The etcd key prefix must start with '/', e.g. /locks; got '" + ShownText.of(prefix) + "'");
        }
        URI uri;
        try {
            uri = new URI(EtcdLocation.SCHEME, null, prefix, null);
        } catch (URISyntaxException e) {
            throw new LockConfigurationException("Not a usable etcd key prefix: '" + prefix + "'", e);
        }
        EtcdLocation.ofPrefix(uri); // checks the prefix now rather than at build()
        return RemoteLockers.builder().uri(uri).provider(new ApplicationClientProvider(client));
    }
}
