package io.distlock.testing;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/** {@code host:port} strings and socket addresses. */
final class Endpoints {

    private Endpoints() {}

    /** {@code 127.0.0.1:port}. */
    static String loopback(int port) {
        return InetAddress.getLoopbackAddress().getHostAddress() + ":" + port;
    }

    /**
     * Parses {@code host:port}, also accepting a URL such as {@code http://host:port}.
     *
     * @throws IllegalArgumentException if there is no valid port
     */
    static InetSocketAddress address(String endpoint) {
        String hostPort = stripScheme(endpoint);
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("Expected host:port, got '" + endpoint + "'");
        }
        try {
            int port = Integer.parseInt(hostPort.substring(colon + 1));
            return new InetSocketAddress(hostPort.substring(0, colon), port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Expected host:port, got '" + endpoint + "'", e);
        }
    }

    /** {@code host:port} of {@code http://host:port/...}; {@code host:port} unchanged. */
    static String stripScheme(String endpoint) {
        String s = endpoint.trim();
        int scheme = s.indexOf("://");
        if (scheme >= 0) {
            s = s.substring(scheme + 3);
        }
        int slash = s.indexOf('/');
        return slash >= 0 ? s.substring(0, slash) : s;
    }
}
