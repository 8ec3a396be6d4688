package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The files and command line of one forked Cassandra node: {@code cassandra.yaml}, {@code logback.xml} and the JVM
 * flags Cassandra's own {@code conf/jvm17-server.options} sets (without the module flags the server stops with
 * "FATAL: Cassandra is unable to access required classes"). Tuned for tests: 4 tokens, small memtables, no snapshots,
 * no bootstrap streaming (all nodes start together), short ring delay, no JMX port, WARN logging.
 *
 * <p>The node binds its native (CQL) port on {@code rpcAddress} and advertises {@code broadcastRpcAddress} (same
 * port) to clients, in {@code system.local}/{@code system.peers}: the fixture puts a {@link TcpProxy} there, so a
 * driver that discovers the other nodes from the cluster still goes through the proxies.
 *
 * <p>With {@code security} (null for none), the node asks for logins and serves CQL over TLS only.
 */
record CassandraNodeConfig(
        String clusterName,
        String name,
        String listenAddress,
        String broadcastRpcAddress,
        int storagePort,
        int nativePort,
        String seeds,
        Path directory,
        String maxHeap,
        CassandraSecurity security) {

    /** Server-side request timeouts; clients of the fixture wait longer (see CassandraSessions). */
    static final long SERVER_READ_TIMEOUT_MILLIS = 10_000;

    static final long SERVER_WRITE_TIMEOUT_MILLIS = 5_000;

    /** The JVM flags of Cassandra's conf/jvm17-server.options that the server cannot start without. */
    private static final List<String> MODULE_FLAGS = List.of(
            "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
            "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
            "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
            "--add-exports=java.sql/java.sql=ALL-UNNAMED",
            "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
            "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
            "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
            "--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
            "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED");

    /** A node without security. */
    CassandraNodeConfig(
            String clusterName,
            String name,
            String listenAddress,
            String broadcastRpcAddress,
            int storagePort,
            int nativePort,
            String seeds,
            Path directory,
            String maxHeap) {
        this(
                clusterName,
                name,
                listenAddress,
                broadcastRpcAddress,
                storagePort,
                nativePort,
                seeds,
                directory,
                maxHeap,
                null);
    }

    /** Where the node serves CQL (the address it binds). */
    InetSocketAddress nativeAddress() {
        return new InetSocketAddress(listenAddress, nativePort);
    }

    /** Where clients reach the node: the advertised address, where the node's proxy listens. */
    InetSocketAddress clientAddress() {
        return new InetSocketAddress(broadcastRpcAddress, nativePort);
    }

    Path yamlFile() {
        return directory.resolve("conf").resolve("cassandra.yaml");
    }

    Path logbackFile() {
        return directory.resolve("conf").resolve("logback.xml");
    }

    Path logFile() {
        return directory.resolve("logs").resolve(name + ".log");
    }

    /** Writes conf/cassandra.yaml and conf/logback.xml and creates the data, log, triggers and tmp directories. */
    void writeFiles() {
        try {
            Files.createDirectories(directory.resolve("conf"));
            Files.createDirectories(directory.resolve("data"));
            Files.createDirectories(directory.resolve("logs"));
            Files.createDirectories(directory.resolve("triggers"));
            Files.createDirectories(directory.resolve("tmp"));
            Files.writeString(yamlFile(), yaml(), StandardCharsets.UTF_8);
            Files.writeString(logbackFile(), LOGBACK, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the configuration of Cassandra node " + name, e);
        }
    }

    /** The command line running {@code CassandraDaemon} with {@code java} on {@code classpath}. */
    List<String> command(Path java, String classpath) {
        return command(java, classpath, false);
    }

    /** As above; with {@code skewableClock}, on {@link CassandraServerClock} (see there). */
    List<String> command(Path java, String classpath, boolean skewableClock) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.add("-Xms256M");
        cmd.add("-Xmx" + maxHeap);
        cmd.add("-Xss256k");
        cmd.add("-XX:+UseG1GC");
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        cmd.add("-Djdk.attach.allowAttachSelf=true");
        cmd.addAll(MODULE_FLAGS);
        cmd.add("-Dio.netty.tryReflectionSetAccessible=true");
        cmd.add("-Djava.net.preferIPv4Stack=true");
        cmd.add("-Dcassandra.config=" + yamlFile().toUri());
        cmd.add("-Dcassandra.storagedir=" + directory.resolve("data"));
        cmd.add("-Dcassandra.logdir=" + directory.resolve("logs"));
        cmd.add("-Dcassandra.triggers_dir=" + directory.resolve("triggers"));
        cmd.add("-Djava.io.tmpdir=" + directory.resolve("tmp")); // the native libraries it extracts, not in /tmp
        cmd.add("-Dlogback.configurationFile=" + logbackFile());
        cmd.add("-Dcassandra-foreground=yes");
        // Start in seconds rather than a minute: no gossip settling, short ring delay, no superuser setup delay.
        cmd.add("-Dcassandra.skip_wait_for_gossip_to_settle=0");
        cmd.add("-Dcassandra.ring_delay_ms=1000");
        cmd.add("-Dcassandra.superuser_setup_delay_ms=0");
        if (skewableClock) {
            cmd.addAll(CassandraServerClock.flags(directory));
        }
        cmd.add("-cp");
        cmd.add(skewableClock ? CassandraServerClock.classpath(classpath) : classpath);
        cmd.add("org.apache.cassandra.service.CassandraDaemon");
        return cmd;
    }

    String yaml() {
        return String.join(
                "\n",
                "cluster_name: '" + clusterName + "'",
                "num_tokens: 4",
                "partitioner: org.apache.cassandra.dht.Murmur3Partitioner",
                "endpoint_snitch: SimpleSnitch",
                "commitlog_sync: periodic",
                "commitlog_sync_period: 10000ms",
                "commitlog_segment_size: 8MiB",
                "seed_provider:",
                "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider",
                "    parameters:",
                "      - seeds: \"" + seeds + "\"",
                "listen_address: " + listenAddress,
                "rpc_address: " + listenAddress,
                "broadcast_rpc_address: " + broadcastRpcAddress,
                "storage_port: " + storagePort,
                "native_transport_port: " + nativePort,
                "start_native_transport: true",
                "auto_bootstrap: false",
                "auto_snapshot: false",
                "snapshot_before_compaction: false",
                "incremental_backups: false",
                "memtable_heap_space: 32MiB",
                "memtable_offheap_space: 32MiB",
                "key_cache_size: 8MiB",
                // Test machines are often loaded (several JVMs on two cores pause for seconds): roomier timeouts
                // than the defaults (read 5 s, write 2 s, CAS contention 1 s) keep a slow node from failing a test.
                "read_request_timeout: " + SERVER_READ_TIMEOUT_MILLIS + "ms",
                "range_request_timeout: " + SERVER_READ_TIMEOUT_MILLIS + "ms",
                "write_request_timeout: " + SERVER_WRITE_TIMEOUT_MILLIS + "ms",
                "counter_write_request_timeout: " + SERVER_WRITE_TIMEOUT_MILLIS + "ms",
                "cas_contention_timeout: " + SERVER_WRITE_TIMEOUT_MILLIS + "ms",
                "request_timeout: " + SERVER_READ_TIMEOUT_MILLIS + "ms",
                security == null ? "" : String.join("\n", security.yaml()),
                "");
    }

    private static final String LOGBACK = String.join(
            "\n",
            "<configuration>",
            "  <appender name=\"STDOUT\" class=\"ch.qos.logback.core.ConsoleAppender\">",
            "    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{30} - %msg%n</pattern></encoder>",
            "  </appender>",
            "  <!-- Life-cycle lines (ring state, node up/down), useful in the log tail of a failed start. -->",
            "  <logger name=\"org.apache.cassandra.service.StorageService\" level=\"INFO\"/>",
            "  <logger name=\"org.apache.cassandra.gms.Gossiper\" level=\"INFO\"/>",
            "  <root level=\"WARN\"><appender-ref ref=\"STDOUT\"/></root>",
            "</configuration>",
            "");
}
