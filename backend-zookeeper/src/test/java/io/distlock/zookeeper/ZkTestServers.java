package io.distlock.zookeeper;

import io.distlock.testing.FreePorts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;

/**
 * In-process ZooKeeper servers for this module's tests, on free loopback ports, with a short tick so that session
 * timeouts of a second or two are allowed (the server bounds session timeouts by 2 to 20 ticks unless told otherwise).
 */
final class ZkTestServers {

    /** The server's tick in milliseconds. */
    static final int TICK_MS = 200;

    static {
        // The build points java.io.tmpdir into target/, where the servers' data directories go; make sure it exists.
        new java.io.File(System.getProperty("java.io.tmpdir")).mkdirs();
    }

    private ZkTestServers() {}

    /** A started single server. */
    static TestingServer server() throws Exception {
        return new TestingServer(spec(-1), true);
    }

    /** A started single server taking at most {@code max} connections from one address ({@code maxClientCnxns}). */
    static TestingServer serverWithMaxClientCnxns(int max) throws Exception {
        return new TestingServer(spec(-1, Map.of("maxClientCnxns", String.valueOf(max))), true);
    }

    /** A started ensemble of {@code n} servers. */
    static TestingCluster cluster(int n) throws Exception {
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            specs.add(spec(i));
        }
        TestingCluster cluster = new TestingCluster(specs);
        cluster.start();
        return cluster;
    }

    private static InstanceSpec spec(int serverId) {
        return spec(serverId, Map.of());
    }

    private static InstanceSpec spec(int serverId, Map<String, Object> more) {
        Map<String, Object> properties = new HashMap<>(more);
        properties.put("minSessionTimeout", String.valueOf(2 * TICK_MS));
        properties.put("maxSessionTimeout", "120000");
        // Ports from FreePorts, below the kernel's ephemeral range: Curator's random ones (-1) are drawn from it, and a
        // client's outgoing connection could take one before the server binds it, which makes ZooKeeper's embedded
        // server exit the test JVM (code 2).
        return new InstanceSpec(
                null,
                FreePorts.next(),
                FreePorts.next(),
                FreePorts.next(),
                true,
                serverId,
                TICK_MS,
                -1,
                properties,
                "127.0.0.1");
    }
}
