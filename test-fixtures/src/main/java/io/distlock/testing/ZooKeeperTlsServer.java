package io.distlock.testing;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * One in-process ZooKeeper server with a plaintext client port and a TLS-only {@code secureClientPort} (Netty), its
 * certificate from a {@link TestPki}, asking clients for a certificate of that authority ({@code ssl.clientAuth=need}).
 * Digest authentication needs nothing on the server.
 *
 * <p>ZooKeeper reads the {@code ssl.*} and {@code serverCnxnFactory} settings of its configuration into JVM-wide
 * {@code zookeeper.*} system properties, and its TLS port reads them again for every connection: they stay set while
 * the server runs and are put back as they were when it stops. A client under test must therefore set every TLS
 * setting it relies on in its own configuration (which distlock's does), not inherit them.
 */
final class ZooKeeperTlsServer implements ZooKeeperNode.Control, AutoCloseable {

    private final Path dir;
    private final Properties properties = new Properties();
    private ZooKeeperServerEmbedded server;
    /** The {@code zookeeper.*} system properties before the server set its own; null while none are set. */
    private Map<String, String> before;

    ZooKeeperTlsServer(Path dir, int port, int securePort, TestPki pki, int tickMillis, int maxSessionMillis) {
        this.dir = dir;
        TestPki.Identity identity = pki.server("localhost");
        properties.put("clientPort", Integer.toString(port));
        properties.put("clientPortAddress", "127.0.0.1");
        properties.put("secureClientPort", Integer.toString(securePort));
        properties.put("secureClientPortAddress", "127.0.0.1");
        properties.put("dataDir", dir.resolve("data").toString());
        properties.put("tickTime", Integer.toString(tickMillis));
        properties.put("initLimit", "10");
        properties.put("syncLimit", "5");
        properties.put("maxSessionTimeout", Integer.toString(maxSessionMillis));
        properties.put("admin.enableServer", "false");
        properties.put("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory");
        properties.put("ssl.keyStore.location", identity.keyStore().toString());
        properties.put("ssl.keyStore.password", identity.keyStorePassword());
        properties.put("ssl.keyStore.type", "PKCS12");
        properties.put("ssl.trustStore.location", pki.caFile().toString());
        properties.put("ssl.trustStore.type", "PEM");
        properties.put("ssl.clientAuth", "need");
    }

    @Override
    public synchronized void restart() throws Exception {
        if (before == null) {
            before = zookeeperProperties();
        }
        server = ZooKeeperServerEmbedded.builder()
                .baseDir(dir)
                .configuration(properties)
                .exitHandler(ExitHandler.LOG_ONLY)
                .build();
        server.start();
    }

    @Override
    public synchronized void stop() {
        if (server != null) {
            server.close();
            server = null;
        }
        if (before != null) {
            restore(before);
            before = null;
        }
    }

    @Override
    public void kill() {
        stop(); // an embedded server has no kill
    }

    @Override
    public void close() {
        stop();
    }

    private static Map<String, String> zookeeperProperties() {
        Map<String, String> copy = new HashMap<>();
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("zookeeper.")) {
                copy.put(name, System.getProperty(name));
            }
        }
        return copy;
    }

    private static void restore(Map<String, String> before) {
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("zookeeper.") && !before.containsKey(name)) {
                System.clearProperty(name);
            }
        }
        before.forEach(System::setProperty);
    }
}
