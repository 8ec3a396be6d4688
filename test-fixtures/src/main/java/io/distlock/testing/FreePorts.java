package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Free TCP ports on loopback. A port is free when asked; a server started at once on it almost always gets it.
 * Ports handed out by this JVM are never handed out twice, so two fixtures starting together do not collide.
 */
public final class FreePorts {

    private static final Set<Integer> GIVEN = new HashSet<>();

    private FreePorts() {}

    /** A free port on 127.0.0.1 not handed out before by this JVM. */
    public static synchronized int next() {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                socket.setReuseAddress(true);
                int port = socket.getLocalPort();
                if (GIVEN.add(port)) {
                    return port;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot find a free loopback port", e);
            }
        }
        throw new IllegalStateException("No new free loopback port after 100 attempts");
    }
}
