package io.distlock.benchmarks;

import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.HostList;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A peer target spec, {@code peer:<name>://host[:port][,host[:port]...][/path][?name=value&...]}, taken apart.
 *
 * @param name the peer's name, e.g. {@code curator}
 * @param hosts {@code host:port} of each server, the default port filled in
 * @param path the part after the hosts without its leading slash, possibly empty
 * @param options the query options
 */
record PeerSpec(String name, List<String> hosts, String path, Map<String, String> options) {

    static final String PREFIX = "peer:";

    private static final String EXPECTED = "expected peer:<name>://host[:port][,host[:port]...][/path]";

    /** Whether {@code spec} names the peer {@code name}. */
    static boolean names(String spec, String name) {
        return spec.startsWith(PREFIX + name + "://");
    }

    /**
     * Parses {@code spec}.
     *
     * @throws IllegalArgumentException naming what is malformed
     */
    static PeerSpec parse(String spec, int defaultPort) {
        if (!spec.startsWith(PREFIX) || !spec.contains("://")) {
            throw new IllegalArgumentException("Malformed peer spec '" + spec + "'; " + EXPECTED);
        }
        String name = spec.substring(PREFIX.length(), spec.indexOf("://"));
        String rest = spec.substring(spec.indexOf("://") + 3);
        Map<String, String> options = new LinkedHashMap<>();
        int q = rest.indexOf('?');
        if (q >= 0) {
            for (String pair : rest.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("Malformed option '" + pair + "' in peer spec '" + spec + "'");
                }
                options.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String hostPart = slash >= 0 ? rest.substring(0, slash) : rest;
        String path = slash >= 0 ? rest.substring(slash + 1) : "";
        if (hostPart.isBlank()) {
            throw new IllegalArgumentException("Peer spec '" + spec + "' names no host");
        }
        URI hostList;
        try {
            hostList = new URI(name + "://" + hostPart);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("Malformed hosts in peer spec '" + spec + "': " + e.getMessage(), e);
        }
        List<String> hosts = HostList.parse(hostList, "peer", defaultPort, EXPECTED).addresses().stream()
                .map(HostList.Address::toString)
                .toList();
        return new PeerSpec(name, hosts, path, options);
    }

    /**
     * Fails if an option other than {@code known} was given, so that a typo is reported rather than measured as the
     * default.
     *
     * @throws IllegalArgumentException naming the unknown options and listing the known ones
     */
    PeerSpec requireOnly(Set<String> known) {
        Set<String> unknown = new TreeSet<>(options.keySet());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("Unknown option" + (unknown.size() > 1 ? "s " : " ") + unknown
                    + " for peer:" + name + "; known options: " + (known.isEmpty() ? "none" : new TreeSet<>(known)));
        }
        return this;
    }

    /**
     * The option {@code key}, one of {@code allowed}, or {@code fallback}.
     *
     * @throws IllegalArgumentException naming the option, its value and the values allowed
     */
    String choice(String key, List<String> allowed, String fallback) {
        String value = options.getOrDefault(key, fallback);
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException(
                    "Option '" + key + "' of peer:" + name + " must be one of " + allowed + ", got '" + value + "'");
        }
        return value;
    }

    /** The option {@code key}, or {@code fallback}. */
    String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }

    /**
     * The option {@code ttl} (a duration such as {@code 10s}): the peer's session timeout or lease time, else {@code
     * fallback}.
     *
     * @throws io.distlock.LockConfigurationException naming the option if it is malformed or not positive
     */
    Duration ttl(Duration fallback) {
        String value = options.get("ttl");
        return value == null ? fallback : DurationText.parseOption("ttl", value);
    }

    static String host(String hostPort) {
        return hostPort.substring(0, hostPort.lastIndexOf(':'));
    }

    static int port(String hostPort) {
        return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
    }
}
