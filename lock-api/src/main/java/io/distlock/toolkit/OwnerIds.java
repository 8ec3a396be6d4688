package io.distlock.toolkit;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owner ids, one per acquisition: 32 hex digits, then the process id and host, e.g. {@code
 * 3f2a...9c.4711@worker-7}. The first 16 digits are random bits drawn once per process (from {@link SecureRandom}),
 * the next 16 a sequence number of this process that starts at a random value: an id is never repeated within a
 * process, and processes are told apart by their random half (and the rest). The rest tells a human where the holder
 * runs. Only uniqueness is needed (no backend relies on an owner id being secret), so no random bits are drawn per
 * acquisition: that costs a system call and a lock shared by every thread.
 */
public final class OwnerIds {

    private static final HexFormat HEX = HexFormat.of();
    private static final String PROCESS;
    private static final AtomicLong SEQUENCE;

    static {
        SecureRandom random = new SecureRandom();
        PROCESS = HEX.toHexDigits(random.nextLong());
        SEQUENCE = new AtomicLong(random.nextLong());
    }

    private static final String SUFFIX = "." + ProcessHandle.current().pid() + "@" + hostName();

    private OwnerIds() {}

    /** A new owner id, never returned before. */
    public static String next() {
        return PROCESS + HEX.toHexDigits(SEQUENCE.getAndIncrement()) + SUFFIX;
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
