package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the Cassandra fixture decides before starting anything: JDK, server classpath, input checks. No server. */
class CassandraClusterSetupTest {

    @Test
    void jdk_isFound_andIsJava11To17() {
        Path java = CassandraJdk.find().orElseThrow(() -> new AssertionError(CassandraJdk.missingMessage()));
        Path home = java.getParent().getParent();

        assertThat(CassandraJdk.featureVersion(home))
                .hasValueSatisfying(v -> assertThat(v).isBetween(11, 17));
    }

    @Test
    void jdkVersion_ofNonJdkDirectory_isEmpty() {
        assertThat(CassandraJdk.featureVersion(Paths.get("target"))).isEmpty();
    }

    @Test
    void serverClasspath_hasCassandraAll_onItsOwnNetty() {
        List<String> jars = Arrays.asList(CassandraServerClasspath.resolve().split(":"));

        assertThat(jars).anyMatch(j -> j.endsWith("/cassandra-all-5.0.9.jar"));
        // The parent's netty-bom (4.2, for the clients) must not leak into the server: cassandra-all 5.0 is built on
        // 4.1.
        assertThat(jars)
                .filteredOn(j -> j.contains("/io/netty/netty-common/"))
                .singleElement()
                .satisfies(j -> assertThat(j).contains("/4.1."));
        assertThat(jars).allMatch(j -> Paths.get(j).isAbsolute());
    }

    @Test
    void serverClasspath_isNotOnTheKitsClasspath() {
        assertThat(getClass().getClassLoader().getResource("org/apache/cassandra/service/CassandraDaemon.class"))
                .isNull();
    }

    @Test
    void externalContactPoints_parseHostsAndDefaultPort() {
        assertThat(ExternalCassandra.parse("db1:9142, db2"))
                .containsExactly(
                        InetSocketAddress.createUnresolved("db1", 9142),
                        InetSocketAddress.createUnresolved("db2", 9042));
    }

    @Test
    void externalContactPoints_withBadPortOrNothing_areRejected() {
        assertThatThrownBy(() -> ExternalCassandra.parse("db1:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(CassandraCluster.CONTACT_POINTS_ENV)
                .hasMessageContaining("db1:x");
        assertThatThrownBy(() -> ExternalCassandra.parse(" , "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
    }

    @Test
    void builder_rejectsUnsupportedSizesAndHeaps() {
        assertThatThrownBy(() -> CassandraCluster.builder().withNodes(2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 or 3");
        assertThatThrownBy(() -> CassandraCluster.builder().withMaxHeap("lots"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("768M");
    }

    @Test
    void cluster_usedBeforeStart_saysHowToRegisterIt() {
        CassandraCluster cluster = CassandraCluster.builder().build();

        assertThatThrownBy(cluster::contactPoints)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("static");
    }

    @Test
    void nodeConfig_advertisesTheProxyAddress_andListsEverySeed() {
        CassandraNodeConfig config = new CassandraNodeConfig(
                "c", "n1", "127.0.0.2", "127.0.1.2", 7000, 9042, "127.0.0.1:7000,127.0.0.2:7000", Paths.get("x"), "1G");

        assertThat(config.yaml())
                .contains("listen_address: 127.0.0.2\n")
                .contains("rpc_address: 127.0.0.2\n")
                .contains("broadcast_rpc_address: 127.0.1.2\n")
                .contains("seeds: \"127.0.0.1:7000,127.0.0.2:7000\"")
                .contains("auto_bootstrap: false");
        assertThat(config.command(Paths.get("/jdk/bin/java"), "cp"))
                .contains("-Xmx1G", "--add-opens=java.base/java.lang=ALL-UNNAMED", "-cp", "cp")
                .contains("-Djava.io.tmpdir=" + Paths.get("x").resolve("tmp"))
                .endsWith("org.apache.cassandra.service.CassandraDaemon");
    }
}
