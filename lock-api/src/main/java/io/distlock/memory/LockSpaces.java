package io.distlock.memory;

import java.util.concurrent.ConcurrentHashMap;

/** The process-wide registry of named in-memory lock spaces. */
final class LockSpaces {

    static final String DEFAULT = "default";

    private static final ConcurrentHashMap<String, LockSpace> SPACES = new ConcurrentHashMap<>();

    private LockSpaces() {}

    static LockSpace named(String name) {
        return SPACES.computeIfAbsent(name, LockSpace::new);
    }
}
