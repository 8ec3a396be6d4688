package io.distlock.spi;

import java.util.Objects;

/**
 * A password or other secret read from a backend option ({@link BackendConfig#secretOption}). Its {@link #toString()}
 * never shows the value, so a secret that ends up in a log line, an exception message or a report shows as {@code
 * ****}; only {@link #reveal()} gives it, for the client library that needs it.
 */
public final class Secret {

    private final String value;
    private final String source;

    Secret(String value, String source) {
        this.value = Objects.requireNonNull(value, "value");
        this.source = Objects.requireNonNull(source, "source");
    }

    /** The secret itself: hand it to the client library, never to a log or a message. */
    public String reveal() {
        return value;
    }

    /** Where it was read from, without its value: the option's name, the file or the environment variable. */
    public String source() {
        return source;
    }

    /** {@code Secret[****, from <source>]}: never the value. */
    @Override
    public String toString() {
        return "Secret[****, from " + source + "]";
    }
}
