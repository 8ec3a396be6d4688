package io.distlock.testing;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.kit.TestTimeouts;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * One Cassandra node in a Docker container (Testcontainers), the fall-back when no JDK 11/17 is found to fork the
 * server. One node only; no fault controls.
 */
final class ContainerCassandra implements CassandraServers {

    static final String IMAGE = "cassandra:5.0.9";
    private static final int CQL_PORT = 9042;

    private final GenericContainer<?> container;

    private ContainerCassandra(GenericContainer<?> container) {
        this.container = container;
    }

    /** Starts the container and blocks until Cassandra listens for CQL clients. */
    @SuppressWarnings("resource") // closed by close()
    static ContainerCassandra start(String maxHeap) {
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withExposedPorts(CQL_PORT)
                .withEnv("MAX_HEAP_SIZE", maxHeap)
                .withEnv("HEAP_NEWSIZE", "128M")
                .waitingFor(Wait.forLogMessage(".*Starting listening for CQL clients.*\\n", 1)
                        .withStartupTimeout(TestTimeouts.scaled(Duration.ofMinutes(3))));
        container.start();
        return new ContainerCassandra(container);
    }

    @Override
    public List<InetSocketAddress> contactPoints() {
        return List.of(new InetSocketAddress(container.getHost(), container.getMappedPort(CQL_PORT)));
    }

    @Override
    public String localDatacenter() {
        return CassandraSessions.DEFAULT_DATACENTER;
    }

    @Override
    public int size() {
        return 1;
    }

    @Override
    public ServerSource source() {
        return ServerSource.CONTAINER;
    }

    @Override
    public CqlSession adminSession() {
        return CassandraSessions.client(contactPoints(), localDatacenter(), null);
    }

    @Override
    public ForkedCassandra forked() {
        throw new UnsupportedOperationException("Fault controls need a cluster this fixture forks; Cassandra runs in"
                + " a container because no JDK 11/17 was found. " + CassandraJdk.missingMessage());
    }

    @Override
    public void close() {
        container.stop();
    }

    @Override
    public String toString() {
        return "ContainerCassandra[" + IMAGE + ", " + contactPoints() + "]";
    }
}
