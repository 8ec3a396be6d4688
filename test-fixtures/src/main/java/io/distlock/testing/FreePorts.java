package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on loopback. A port is free when asked; a server started at once on it almost always gets it.
 * Ports handed out by this JVM are never handed out twice, so two fixtures starting together do not collide.
 *
 * <p>Ports are drawn below Linux's default ephemeral range (32768-60999): a port the kernel hands to outgoing
 * connections could be taken by one of them (a client of another test's server) between this check and the server's
 * bind. Only if none is found there is the kernel asked for one.
 */
public final class FreePorts {

    private static final Set<Integer> GIVEN = new HashSet<>();

    private FreePorts() {}

    private static final int LOW = 15_000;
    private static final int HIGH = 32_000;

    /** A free port on 127.0.0.1 not handed out before by this JVM. */
    public static synchronized int next() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOW, HIGH);
            if (!GIVEN.contains(port) && bindable(port)) {
                GIVEN.add(port);
                return port;
            }
        }
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

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
