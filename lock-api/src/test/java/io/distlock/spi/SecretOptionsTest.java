package io.distlock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.toolkit.TlsSettings;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Secrets and TLS files read from options the same way for every backend, and never shown. */
class SecretOptionsTest {

    private static final String PASSWORD = "s3cr3t-Pa55";

    @TempDir
    Path dir;

    private static BackendConfig config(Map<String, String> options) {
        return new BackendConfig(
                URI.create("test://h:1/x"),
                options,
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                Ticker.system(),
                Clock.systemUTC());
    }

    @Test
    void secretOption_fromTheOptionAFileOrTheEnvironment_neverShowsTheValue() throws Exception {
        Secret literal =
                config(Map.of("password", PASSWORD)).secretOption("password").orElseThrow();
        assertThat(literal.reveal()).isEqualTo(PASSWORD);
        assertThat(literal.toString()).doesNotContain(PASSWORD).contains("****");

        Path file = Files.writeString(dir.resolve("pw"), PASSWORD + "\nignored second line\n");
        Secret fromFile = config(Map.of("passwordFile", file.toString()))
                .secretOption("password")
                .orElseThrow();
        assertThat(fromFile.reveal()).isEqualTo(PASSWORD);
        assertThat(fromFile.source()).contains(file.toString()).doesNotContain(PASSWORD);

        String variable = System.getenv().keySet().stream()
                .filter(k -> !System.getenv(k).isEmpty())
                .findFirst()
                .orElseThrow();
        Secret fromEnv =
                config(Map.of("passwordEnv", variable)).secretOption("password").orElseThrow();
        assertThat(fromEnv.reveal()).isEqualTo(System.getenv(variable));
        assertThat(fromEnv.toString()).doesNotContain(System.getenv(variable));

        BackendConfig none = config(Map.of());
        assertThat(none.secretOption("password")).isEmpty();
        assertThat(none.readOptions()).contains("password", "passwordFile", "passwordEnv");
    }

    @Test
    void secretOption_badReferences_nameTheProblemNotTheSecret() throws Exception {
        assertThatThrownBy(() ->
                        config(Map.of("password", PASSWORD, "passwordEnv", "X")).secretOption("password"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("once")
                .hasMessageNotContaining(PASSWORD);
        assertThatThrownBy(() -> config(
                                Map.of("passwordFile", dir.resolve("missing").toString()))
                        .secretOption("password"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("passwordFile")
                .hasMessageContaining("missing");
        Path empty = Files.writeString(dir.resolve("empty"), "");
        assertThatThrownBy(
                        () -> config(Map.of("passwordFile", empty.toString())).secretOption("password"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("is empty");
        assertThatThrownBy(() -> config(Map.of("passwordEnv", "DISTLOCK_SURELY_UNSET_VARIABLE"))
                        .secretOption("password"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("DISTLOCK_SURELY_UNSET_VARIABLE")
                .hasMessageContaining("not set");
    }

    @Test
    void tlsSettings_readTheSameOptionsEverywhere() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        Path cert = Files.writeString(dir.resolve("client.pem"), "-----BEGIN CERTIFICATE-----\n");
        Path key = Files.writeString(dir.resolve("client.key"), "-----BEGIN PRIVATE KEY-----\n");

        assertThat(TlsSettings.read(config(Map.of()), false)).isEmpty();
        TlsSettings byScheme = TlsSettings.read(config(Map.of()), true).orElseThrow();
        assertThat(byScheme.caFile()).isEmpty();
        assertThat(byScheme.verifyHost()).isTrue();
        TlsSettings mutual = TlsSettings.read(
                        config(Map.of(
                                "tls", "true",
                                "caFile", ca.toString(),
                                "certFile", cert.toString(),
                                "keyFile", key.toString(),
                                "verifyHost", "false")),
                        false)
                .orElseThrow();
        assertThat(mutual.mutual()).isTrue();
        assertThat(mutual.caFile()).contains(ca);
        assertThat(mutual.verifyHost()).isFalse();

        assertThatThrownBy(() -> TlsSettings.read(config(Map.of("tls", "true", "certFile", cert.toString())), false))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyFile");
        assertThatThrownBy(() -> TlsSettings.read(config(Map.of("caFile", ca.toString())), false))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("TLS is off");
        assertThatThrownBy(() -> TlsSettings.read(config(Map.of("tls", "false")), true))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("contradicts");
        assertThatThrownBy(() -> TlsSettings.read(
                        config(Map.of(
                                "tls", "true", "caFile", dir.resolve("nope.pem").toString())),
                        false))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("caFile")
                .hasMessageContaining("nope.pem");
    }

    @Test
    void open_uriWithCredentials_isRefusedWithoutShowingThem() {
        assertThatThrownBy(() -> RemoteLockers.open("memory://admin:" + PASSWORD + "@host/x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("carries credentials")
                .hasMessageContaining("'password'")
                .hasMessageNotContaining(PASSWORD)
                .hasMessageNotContaining("admin");
        assertThatThrownBy(() -> RemoteLockers.open("memory:/a b?password=" + PASSWORD))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Malformed")
                .hasMessageNotContaining(PASSWORD);
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("memory:/?ttl=5s&password=" + PASSWORD)
                        .leaseTime(Duration.ofSeconds(5))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageNotContaining(PASSWORD);
    }
}
