package io.distlock.testing;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The Testcontainers path, used only when no local binary exists and a Docker engine answers. Kept small on purpose:
 * one container per server, a mapped port, no process faults (the fixture's proxies still give partitions).
 */
final class Containers {

    private static final Logger LOG = LoggerFactory.getLogger(Containers.class);

    private Containers() {}

    /** Whether a Docker engine answers; {@code false} (never an exception) when Testcontainers cannot reach one. */
    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable e) { // NoClassDefFoundError, configuration errors: no Docker for us either way
            LOG.debug("No Docker engine: {}", e.toString());
            return false;
        }
    }

    /** A started container of {@code image} running {@code command}, with {@code port} mapped to a host port. */
    static Running start(String image, int port, List<String> command) {
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(image))
                .withExposedPorts(port)
                .withCommand(command.toArray(new String[0]));
        container.start();
        return new Running(container, port);
    }

    /** A running container; {@link #close()} removes it. */
    static final class Running implements AutoCloseable {
        private final GenericContainer<?> container;
        private final int port;

        private Running(GenericContainer<?> container, int port) {
            this.container = container;
            this.port = port;
        }

        /** {@code host:port} the container's port is mapped to. */
        String endpoint() {
            return container.getHost() + ":" + container.getMappedPort(port);
        }

        @Override
        public void close() {
            container.stop();
        }
    }
}
