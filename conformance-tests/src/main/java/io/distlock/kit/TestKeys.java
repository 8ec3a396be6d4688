package io.distlock.kit;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/** Keys unique to one test run, so tests sharing a store never see each other's locks. */
final class TestKeys {

    private TestKeys() {}

    /** {@code kit-<name>-<random>}. */
    static String unique(String name) {
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        return "kit-" + name + "-" + HexFormat.of().formatHex(random);
    }
}
