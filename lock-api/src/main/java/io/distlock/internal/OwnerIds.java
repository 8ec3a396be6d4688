package io.distlock.internal;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Owner ids, one per acquisition: 128 random bits, then the process id and host, e.g. {@code
 * 3f2a...9c.4711@worker-7}. The random part makes the id unique; the rest tells a human where the holder runs.
 */
public final class OwnerIds {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String SUFFIX = "." + ProcessHandle.current().pid() + "@" + hostName();

    private OwnerIds() {}

    /** A new owner id, never returned before. */
    public static String next() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes) + SUFFIX;
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        String name;
        if (env != null && !env.isBlank()) {
            name = env;
        } else {
            try {
                name = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                name = "unknown-host";
            }
        }
        return name.replaceAll("[^A-Za-z0-9.-]", "_");
    }
}
