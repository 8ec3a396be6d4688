package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code lockctl} reaches a store that asks for TLS, a client certificate and an ACL user with the library's own
 * options, and shows no password: a Redis that serves TLS only, with the default user off.
 */
class SecuredStoreTest {

    private static final String PASSWORD = "pw-" + UUID.randomUUID();
    private static final TestPki PKI = TestPki.create(Path.of("target", "pki", "lockctl-" + UUID.randomUUID()));

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder()
            .tls(PKI)
            .requireClientCertificates()
            .aclUser(
                    "locker",
                    PASSWORD,
                    "~distlock:*",
                    "&distlock:released",
                    "+set",
                    "+get",
                    "+del",
                    "+pexpire",
                    "+publish",
                    "+eval",
                    "+evalsha",
                    "+subscribe")
            .build();

    private static String store(String password) {
        TestPki.Identity client = PKI.client("locker");
        return "rediss://" + REDIS.endpoints().get(0) + "?user=locker&" + password + "&caFile="
                + PKI.caFile().toAbsolutePath() + "&certFile="
                + client.certFile().toAbsolutePath() + "&keyFile="
                + client.keyFile().toAbsolutePath();
    }

    @Test
    void conformance_onASecuredStore_passes_withThePasswordFromAFile() throws Exception {
        Path passwordFile = Files.writeString(PKI.caFile().resolveSibling("password"), PASSWORD + "\n");
        Cli cli = Cli.run(
                "conformance",
                "--store",
                store("passwordFile=" + passwordFile.toAbsolutePath()),
                "--only",
                ".*manyThreadsOneKey.*");

        assertThat(cli.exitCode()).as(cli.out() + cli.err()).isZero();
        assertThat(cli.out())
                .contains("PASS  lock_isExclusive_manyThreadsOneKey_theorem1")
                .doesNotContain("FAIL ");
    }

    @Test
    void conformance_withALiteralPassword_neverShowsIt() {
        Cli cli = Cli.run("conformance", "--store", store("password=" + PASSWORD), "--only", ".*manyThreadsOneKey.*");

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(cli.out()).contains("password=****").doesNotContain(PASSWORD);
        assertThat(cli.err()).doesNotContain(PASSWORD);
    }

    @Test
    void conformance_withAWrongPassword_namesTheCause_notThePassword() {
        Cli cli = Cli.run(
                "conformance", "--store", store("password=wrong-" + PASSWORD), "--only", ".*manyThreadsOneKey.*");

        assertThat(cli.exitCode()).isNotZero();
        assertThat(cli.out() + cli.err())
                .containsIgnoringCase("authentication failed")
                .doesNotContain(PASSWORD);
    }
}
