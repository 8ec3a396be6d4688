package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The choice of servers: environment, local binary, container, else a failure with the install command. */
@Timeout(60)
class ServerLocatorTest {

    private static final ServerLocator.Wanted REDIS = new ServerLocator.Wanted(
            "Redis",
            RedisServers.ADDRESSES_VARIABLE,
            RedisServers.BINARY_VARIABLE,
            "redis-server",
            RedisServers.INSTALL_COMMAND);

    @TempDir
    Path dir;

    private static ServerLocator locator(Map<String, String> env, List<Path> dirs, boolean docker) {
        return new ServerLocator(env::get, dirs, () -> docker);
    }

    private Path executable(String name) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/sh\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    @Test
    void locate_prefersAddressesFromEnvironment() throws IOException {
        executable("redis-server");
        ServerLocator.Choice choice = locator(
                        Map.of(RedisServers.ADDRESSES_VARIABLE, " 10.0.0.1:6379, 10.0.0.2:6380 "), List.of(dir), true)
                .locate(REDIS);

        assertThat(choice.source).isEqualTo(ServerSource.ENVIRONMENT);
        assertThat(choice.addresses).containsExactly("10.0.0.1:6379", "10.0.0.2:6380");
    }

    @Test
    void locate_findsBinaryInSearchDirectories_beforeDocker() throws IOException {
        Path binary = executable("redis-server");

        ServerLocator.Choice choice =
                locator(Map.of(), List.of(dir.resolve("empty"), dir), true).locate(REDIS);

        assertThat(choice.source).isEqualTo(ServerSource.LOCAL_BINARY);
        assertThat(choice.binary).isEqualTo(binary);
    }

    @Test
    void locate_ignoresFileThatIsNotExecutable() throws IOException {
        Files.writeString(dir.resolve("redis-server"), "not a program");

        assertThat(locator(Map.of(), List.of(dir), true).locate(REDIS).source).isEqualTo(ServerSource.CONTAINER);
    }

    @Test
    void locate_rejectsBinaryVariableNamingNoExecutable() {
        ServerLocator locator =
                locator(Map.of(RedisServers.BINARY_VARIABLE, dir.resolve("nope").toString()), List.of(), true);

        assertThatThrownBy(() -> locator.locate(REDIS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RedisServers.BINARY_VARIABLE)
                .hasMessageContaining("is not an executable file");
    }

    @Test
    void locate_usesContainer_whenNoBinaryAndDockerAnswers() {
        assertThat(locator(Map.of(), List.of(dir), true).locate(REDIS).source).isEqualTo(ServerSource.CONTAINER);
    }

    @Test
    void redisServers_fail_withInstallCommand_whenNothingAvailable() {
        RedisServers redis = RedisServers.builder()
                .locator(locator(Map.of(), List.of(dir), false))
                .build();

        assertThatThrownBy(redis::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("apt-get install -y redis-server")
                .hasMessageContaining(RedisServers.ADDRESSES_VARIABLE);
        assertThatThrownBy(redis::nodes).hasMessageContaining("not started");
    }

    @Test
    void etcdCluster_fails_withInstallCommand_whenNothingAvailable() {
        EtcdCluster etcd = EtcdCluster.builder()
                .locator(locator(Map.of(), List.of(dir), false))
                .build();

        assertThatThrownBy(etcd::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("apt-get install -y etcd-server etcd-client")
                .hasMessageContaining(EtcdCluster.ENDPOINTS_VARIABLE);
    }

    @Test
    void redisServers_fromEnvironment_offerProxyFaultsOnly() throws IOException {
        try (RedisServers local = RedisServers.builder().build()) {
            local.start();
            String address = local.endpoints().get(0);
            try (RedisServers external = RedisServers.builder()
                    .locator(locator(Map.of(RedisServers.ADDRESSES_VARIABLE, address), List.of(), false))
                    .build()) {
                external.start();

                assertThat(external.source()).isEqualTo(ServerSource.ENVIRONMENT);
                assertThat(external.endpoints()).containsExactly(address);
                ServerNode node = external.node(0);
                assertThatThrownBy(node::kill9)
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining("kill9()")
                        .hasMessageContaining(RedisServers.ADDRESSES_VARIABLE);
                assertThatThrownBy(node::pause).isInstanceOf(UnsupportedOperationException.class);

                node.partition();
                assertThatThrownBy(() -> Resp.command(node.proxiedEndpoint(), Duration.ofMillis(300), "PING"))
                        .isInstanceOf(SocketTimeoutException.class);
                node.heal();
                assertThat(Resp.command(node.proxiedEndpoint(), Duration.ofSeconds(5), "PING"))
                        .isEqualTo("PONG");
            }
            assertThat(Resp.ping(address, Duration.ofSeconds(5)))
                    .as("closing the fixture leaves the external server alone")
                    .isTrue();
        }
    }

    @Test
    void redisServers_fromEnvironment_needEnoughAddresses() {
        RedisServers redis = RedisServers.builder()
                .servers(5)
                .locator(locator(Map.of(RedisServers.ADDRESSES_VARIABLE, "127.0.0.1:1,127.0.0.1:2"), List.of(), false))
                .build();

        assertThatThrownBy(redis::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lists 2 server(s)")
                .hasMessageContaining("needs 5");
    }

    @Test
    void etcdCluster_fromEnvironment_offersProxyFaultsOnly() {
        try (EtcdCluster local = EtcdCluster.builder().build()) {
            local.start();
            String url = local.clientEndpoints().get(0);
            try (EtcdCluster external = EtcdCluster.builder()
                    .locator(locator(Map.of(EtcdCluster.ENDPOINTS_VARIABLE, url), List.of(), false))
                    .build()) {
                external.start();

                assertThat(external.source()).isEqualTo(ServerSource.ENVIRONMENT);
                assertThat(external.clientEndpoints()).containsExactly(url);
                assertThatThrownBy(() -> external.member(0).restart())
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining(EtcdCluster.ENDPOINTS_VARIABLE);
            }
        }
    }
}
