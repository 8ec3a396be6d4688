package io.distlock.testing;

import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A secured forked Cassandra: {@code PasswordAuthenticator} logins (the default superuser {@value
 * CassandraCluster#SUPERUSER}), {@code CassandraAuthorizer} grants, and the native port on TLS only, with a server
 * certificate of the run's {@link TestPki} and a client certificate signed by it required (mutual TLS). The fixture's
 * own sessions log in as the superuser with a client certificate of the same authority.
 */
final class CassandraSecurity {

    private static final String TRUST_STORE_PASSWORD = "changeit";

    private final TestPki.Identity server;
    private final TestPki.Identity fixtureClient;
    private final Path trustStore;

    private CassandraSecurity(TestPki.Identity server, TestPki.Identity fixtureClient, Path trustStore) {
        this.server = server;
        this.fixtureClient = fixtureClient;
        this.trustStore = trustStore;
    }

    /** Issues the server's certificate and the fixture's client certificate from {@code pki}. */
    static CassandraSecurity from(TestPki pki) {
        return new CassandraSecurity(pki.server("cassandra"), pki.client("cassandra-fixture"), pki.trustStore());
    }

    /** The {@code cassandra.yaml} lines that turn security on. */
    List<String> yaml() {
        return List.of(
                "authenticator: PasswordAuthenticator",
                "authorizer: CassandraAuthorizer",
                "role_manager: CassandraRoleManager",
                // No caching: a grant or a new role counts at once.
                "roles_validity: 0ms",
                "permissions_validity: 0ms",
                "credentials_validity: 0ms",
                "client_encryption_options:",
                "  enabled: true",
                "  optional: false",
                "  keystore: " + server.keyStore(),
                "  keystore_password: " + server.keyStorePassword(),
                "  store_type: PKCS12",
                "  require_client_auth: true",
                "  truststore: " + trustStore,
                "  truststore_password: " + TRUST_STORE_PASSWORD);
    }

    /** Logs {@code builder} in as the superuser over mutual TLS (no host name check: the fixture dials nodes directly). */
    CqlSessionBuilder applyTo(CqlSessionBuilder builder) {
        return builder.withAuthCredentials(CassandraCluster.SUPERUSER, CassandraCluster.SUPERUSER_PASSWORD)
                .withSslContext(sslContext());
    }

    private SSLContext sslContext() {
        try {
            KeyStore keys = load(fixtureClient.keyStore(), fixtureClient.keyStorePassword());
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(keys, fixtureClient.keyStorePassword().toCharArray());
            TrustManagerFactory trustManagers =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(load(trustStore, TRUST_STORE_PASSWORD));
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Cannot make the fixture's TLS context", e);
        }
    }

    private static KeyStore load(Path file, String password) throws GeneralSecurityException {
        try (InputStream in = Files.newInputStream(file)) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, password.toCharArray());
            return store;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "CassandraSecurity[password logins, mutual TLS]";
    }
}
