package io.distlock.toolkit;

import io.distlock.LockConfigurationException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The hosts named by a store URI's authority, {@code host[:port][,host[:port]...]}: for every backend whose URI lists
 * servers, so that all of them read a host list the same way and say the same about a bad one.
 *
 * <p>A host is a name ({@code zk1}, {@code db.example.com}), an IPv4 address, or an IPv6 address in brackets ({@code
 * [::1]}); a host without a port gets the store's default port. Spaces around an entry are ignored. Rejected, each
 * with a {@link LockConfigurationException} that names the URI, the problem and what the backend expects: no host,
 * user information ({@code user@host}), an empty entry ({@code a,,b}), an IPv6 address without brackets, a malformed host, a port that is not a number from 1 to 65535, and the same host and port twice (host
 * names compared without regard to case).
 *
 * <p>What is particular to a store (its path, a check that a name resolves to the same server as another) stays in its
 * backend.
 *
 * @param addresses the hosts in the order the URI names them; never empty when parsed
 */
public record HostList(List<Address> addresses) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

    /**
     * One host of the list.
     *
     * @param host the host name or address, an IPv6 address without its brackets
     * @param port from 1 to 65535
     */
    public record Address(String host, int port) {

        /** Checks the parts. */
        public Address {
            Objects.requireNonNull(host, "host");
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " is not in 1..65535");
            }
        }

        /** {@code host:port}, an IPv6 address in brackets ({@code [::1]:2181}), as a client's connect string wants. */
        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** Keeps an unmodifiable copy of {@code addresses}. */
    public HostList {
        addresses = List.copyOf(addresses);
    }

    /**
     * Reads the host list of {@code uri}'s authority and rejects a host named twice.
     *
     * @param uri the store URI, e.g. {@code zk://zk1:2181,zk2/locks}; its path and query are not read
     * @param store the store's name as users know it, for messages, e.g. {@code ZooKeeper}
     * @param defaultPort the port of a host given without one
     * @param expected what the backend accepts, appended to every message, e.g. {@code expected
     *     zk://host[:port][,host[:port]...][/base/path]}
     * @return the hosts, in the URI's order
     * @throws LockConfigurationException if the authority is missing or malformed, naming the URI and the problem
     */
    public static HostList parse(URI uri, String store, int defaultPort, String expected) {
        HostList hosts = parseAllowingDuplicates(uri, store, defaultPort, expected);
        Map<String, Address> seen = new HashMap<>();
        for (Address address : hosts.addresses) {
            Address before = seen.putIfAbsent(address.host().toLowerCase(Locale.ROOT) + ":" + address.port(), address);
            if (before != null) {
                throw invalid(uri, store, "it names the host " + before + " twice", expected);
            }
        }
        return hosts;
    }

    /**
     * Reads the host list like {@link #parse}, but keeps a host named twice: for a backend that checks distinct hosts
     * itself, with a stricter notion of "the same server" (e.g. resolved addresses) and its own explanation.
     *
     * @return the hosts, in the URI's order, repeated ones included
     * @throws LockConfigurationException if the authority is missing or malformed, naming the URI and the problem
     */
    public static HostList parseAllowingDuplicates(URI uri, String store, int defaultPort, String expected) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(expected, "expected");
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isBlank()) {
            throw invalid(uri, store, "it names no host", expected);
        }
        if (authority.contains("@")) {
            throw invalid(uri, store, "user information (user@host) is not supported", expected);
        }
        List<Address> addresses = new ArrayList<>();
        for (String entry : authority.split(",", -1)) {
            addresses.add(address(entry.trim(), uri, store, defaultPort, expected));
        }
        return new HostList(addresses);
    }

    private static Address address(String entry, URI uri, String store, int defaultPort, String expected) {
        if (entry.isEmpty()) {
            throw invalid(uri, store, "empty host in the host list", expected);
        }
        String host;
        String port;
        if (entry.startsWith("[")) { // IPv6 literal, checked by java.net.URI: [::1]:2181
            int close = entry.indexOf(']');
            String rest = close < 0 ? "" : entry.substring(close + 1);
            if (close < 0 || !(rest.isEmpty() || rest.startsWith(":"))) {
                throw invalid(uri, store, "malformed host '" + entry + "'", expected);
            }
            host = entry.substring(1, close);
            port = rest.isEmpty() ? null : rest.substring(1);
        } else {
            if (entry.indexOf(':') != entry.lastIndexOf(':')) {
                throw invalid(
                        uri,
                        store,
                        "an IPv6 address goes in brackets, as in [::1]:" + defaultPort + ", not '" + entry + "'",
                        expected);
            }
            int colon = entry.indexOf(':');
            host = colon < 0 ? entry : entry.substring(0, colon);
            port = colon < 0 ? null : entry.substring(colon + 1);
            if (!host.isEmpty() && !NAME.matcher(host).matches()) {
                throw invalid(uri, store, "malformed host '" + host + "' in '" + entry + "'", expected);
            }
        }
        if (host.isEmpty()) {
            throw invalid(uri, store, "empty host in '" + entry + "'", expected);
        }
        return new Address(host, port == null ? defaultPort : port(port, entry, uri, store, expected));
    }

    private static int port(String raw, String entry, URI uri, String store, String expected) {
        if (PORT.matcher(raw).matches()) {
            int port = Integer.parseInt(raw);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        }
        throw invalid(uri, store, "bad port '" + raw + "' in '" + entry + "': a port must be 1..65535", expected);
    }

    private static LockConfigurationException invalid(URI uri, String store, String problem, String expected) {
        return new LockConfigurationException("Invalid " + store + " URI '" + uri + "': " + problem + "; " + expected);
    }

    /** The hosts as {@code host:port,host:port}, IPv6 addresses in brackets: a connect string, and for messages. */
    @Override
    public String toString() {
        return addresses.stream().map(Address::toString).collect(Collectors.joining(","));
    }
}
