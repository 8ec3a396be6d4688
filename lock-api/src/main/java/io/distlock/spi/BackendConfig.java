package io.distlock.spi;

import io.distlock.LockConfigurationException;
import io.distlock.Ticker;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.ShownText;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Everything a provider needs to open a backend: the URI, its options (from the URI's query and the builder), the
 * lease time, the connect timeout, and the injected time sources.
 *
 * <p>Options are read through the typed accessors, which remember what was read: whatever the provider did not read
 * is reported to the user as an unknown option. Thread-safe.
 */
public final class BackendConfig {

    /** The locker's option for the lease time of each lock ({@link #leaseTime()}); not a backend's to read. */
    public static final String TTL = "ttl";

    /** The locker's option for how long opening may block ({@link #connectTimeout()}); not a backend's to read. */
    public static final String CONNECT_TIMEOUT = "connectTimeout";

    /**
     * The locker's option for the lock-delay ({@link #lockDelay()}); not a backend's to read as an option: a backend
     * declaring {@link io.distlock.Capabilities.Operation#LOCK_DELAY} reads {@link #lockDelay()}.
     */
    public static final String LOCK_DELAY = "lockDelay";

    private final URI uri;
    private final Map<String, String> options;
    private final Duration leaseTime;
    private final Duration connectTimeout;
    private final Duration lockDelay;
    private final Ticker ticker;
    private final Clock clock;
    private final Set<String> read = ConcurrentHashMap.newKeySet();

    /**
     * Creates a configuration; done by the locker, or by tests that open a backend directly.
     *
     * @param uri the store's URI, without the options
     * @param options the backend's options by name (common ones such as {@code ttl} already taken out)
     * @param leaseTime the lease time of each lock
     * @param connectTimeout how long opening may block
     */
    public BackendConfig(
            URI uri,
            Map<String, String> options,
            Duration leaseTime,
            Duration connectTimeout,
            Ticker ticker,
            Clock clock) {
        this(uri, options, leaseTime, connectTimeout, Duration.ZERO, ticker, clock);
    }

    /**
     * Creates a configuration with a lock-delay; done by the locker, or by tests that open a backend directly.
     *
     * @param lockDelay how long a key stays taken after a grant ends without a release; zero for none
     * @throws IllegalArgumentException if {@code lockDelay} is negative
     */
    public BackendConfig(
            URI uri,
            Map<String, String> options,
            Duration leaseTime,
            Duration connectTimeout,
            Duration lockDelay,
            Ticker ticker,
            Clock clock) {
        this.lockDelay = Objects.requireNonNull(lockDelay, "lockDelay");
        if (lockDelay.isNegative()) {
            throw new IllegalArgumentException("lockDelay must not be negative, got " + DurationText.of(lockDelay));
        }
        this.uri = Objects.requireNonNull(uri, "uri");
        this.options = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(options, "options")));
        this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
        this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The store's URI as the user gave it, query stripped. */
    public URI uri() {
        return uri;
    }

    /** The lease time of each lock (option {@code ttl}). */
    public Duration leaseTime() {
        return leaseTime;
    }

    /** How long {@link LockBackendProvider#open} may block connecting (option {@code connectTimeout}). */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * The lock-delay (option {@code lockDelay}, {@link io.distlock.RemoteLockerBuilder#lockDelay}; zero, the default,
     * for none): how much longer than its lease a grant's entry must keep the key from everyone when the grant ends
     * without a release (its holder crashed, froze or was cut off, and its lease ran out). A release, and {@link
     * LockBackend#breakLock}, still free the key at once. Only a backend that declares {@link io.distlock.Capabilities.Operation#LOCK_DELAY} is given a
     * non-zero one; it keeps the holder's validity at the lease alone and adds the delay to what the store keeps.
     */
    public Duration lockDelay() {
        return lockDelay;
    }

    /** The monotonic time source for deadlines and lease validity. */
    public Ticker ticker() {
        return ticker;
    }

    /** The wall clock, for anything that must be compared across machines. */
    public Clock clock() {
        return clock;
    }

    /**
     * The raw value of option {@code name}, if given. Names are matched ignoring case, so that {@code passwordfile}
     * finds {@code passwordFile} (Spring Boot lower-cases option names taken from environment variables).
     *
     * @throws LockConfigurationException if the option is given more than once under names that differ only in case
     */
    public Optional<String> option(String name) {
        read.add(name);
        List<String> given =
                options.keySet().stream().filter(name::equalsIgnoreCase).toList();
        if (given.size() > 1) {
            throw new LockConfigurationException("Option '" + name + "' is given more than once, as " + given
                    + " (option names are matched ignoring case); give it once");
        }
        return given.stream().findFirst().map(options::get);
    }

    /** The value of option {@code name}, or {@code defaultValue}. */
    public String stringOption(String name, String defaultValue) {
        return option(name).orElse(defaultValue);
    }

    /**
     * The value of a duration option such as {@code 500ms}, {@code 10s}, {@code 2m} or ISO-8601 {@code PT10S}; must be
     * positive.
     *
     * @throws LockConfigurationException if the value is malformed or not positive
     */
    public Duration durationOption(String name, Duration defaultValue) {
        return option(name).map(v -> DurationText.parseOption(name, v)).orElse(defaultValue);
    }

    /**
     * The value of an integer option.
     *
     * @throws LockConfigurationException if the value is not an integer within {@code [min, max]}
     */
    public int intOption(String name, int defaultValue, int min, int max) {
        Optional<String> raw = option(name);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        try {
            int value = Integer.parseInt(raw.get().trim());
            if (value < min || value > max) {
                throw new NumberFormatException();
            }
            return value;
        } catch (NumberFormatException e) {
            throw new LockConfigurationException("Option '" + name + "' must be an integer in [" + min + ", " + max
                    + "], got '" + ShownText.of(raw.get()) + "'");
        }
    }

    /**
     * The value of a boolean option ({@code true} or {@code false}).
     *
     * @throws LockConfigurationException if the value is neither
     */
    public boolean booleanOption(String name, boolean defaultValue) {
        Optional<String> raw = option(name);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        return switch (raw.get().trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default ->
                throw new LockConfigurationException(
                        "Option '" + name + "' must be true or false, got '" + ShownText.of(raw.get()) + "'");
        };
    }

    /**
     * A secret (a password, a token) given in one of three ways, so that a URI kept in a configuration repository can
     * carry none: option {@code name} itself (best through {@link io.distlock.RemoteLockerBuilder#option}), option
     * {@code nameFile} (the first line of that file), or option {@code nameEnv} (that environment variable). At most one
     * of them. The value never appears in a message, log line or {@code toString}.
     *
     * @throws LockConfigurationException if more than one form is given, the file cannot be read or is empty, or the
     *     environment variable is not set; the message names the option, file or variable, never the value
     */
    public Optional<Secret> secretOption(String name) {
        Optional<String> literal = option(name);
        Optional<Path> file = fileOption(name + "File");
        Optional<String> variable = option(name + "Env");
        int forms = (literal.isPresent() ? 1 : 0) + (file.isPresent() ? 1 : 0) + (variable.isPresent() ? 1 : 0);
        if (forms > 1) {
            throw new LockConfigurationException("Give the secret '" + name + "' once: as option '" + name + "', '"
                    + name + "File' or '" + name + "Env', not several of them");
        }
        if (literal.isPresent()) {
            return Optional.of(new Secret(literal.get(), "option '" + name + "'"));
        }
        if (file.isPresent()) {
            String firstLine;
            try (java.io.BufferedReader reader = Files.newBufferedReader(file.get(), StandardCharsets.UTF_8)) {
                firstLine = reader.readLine();
            } catch (IOException e) {
                throw new LockConfigurationException(
                        "Option '" + name + "File': cannot read '" + file.get() + "': "
                                + e.getClass().getSimpleName(),
                        e);
            }
            if (firstLine == null || firstLine.isEmpty()) {
                throw new LockConfigurationException(
                        "Option '" + name + "File': '" + file.get() + "' is empty; its first line is the secret");
            }
            return Optional.of(new Secret(firstLine, "file '" + file.get() + "'"));
        }
        if (variable.isPresent()) {
            String value = System.getenv(variable.get());
            if (value == null || value.isEmpty()) {
                throw new LockConfigurationException(
                        "Option '" + name + "Env': environment variable '" + variable.get() + "' is not set");
            }
            return Optional.of(new Secret(value, "environment variable '" + variable.get() + "'"));
        }
        return Optional.empty();
    }

    /**
     * A file named by option {@code name}, checked to exist and be readable.
     *
     * @throws LockConfigurationException naming the option and the file if it is not a readable file
     */
    public Optional<Path> fileOption(String name) {
        Optional<String> raw = option(name);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        Path path;
        try {
            path = Path.of(raw.get().trim());
        } catch (java.nio.file.InvalidPathException e) {
            throw new LockConfigurationException(
                    "Option '" + name + "': '" + ShownText.of(raw.get()) + "' is not a file path", e);
        }
        if (!Files.isRegularFile(path)) {
            throw new LockConfigurationException("Option '" + name + "': no file '" + path + "'");
        }
        if (!Files.isReadable(path)) {
            throw new LockConfigurationException("Option '" + name + "': file '" + path + "' is not readable");
        }
        return Optional.of(path);
    }

    /**
     * Fails if an option was given that has not been read. Providers read all their options first and call this
     * before connecting, so a typo is reported at once rather than after a connect timeout; the locker calls it again
     * after {@link LockBackendProvider#open} returns.
     *
     * @param backendName the provider's name, for the message
     * @throws LockConfigurationException naming the unknown options and listing the known ones
     */
    public void rejectUnknownOptions(String backendName) {
        Set<String> unknown = unreadOptions();
        if (unknown.isEmpty()) {
            return;
        }
        Set<String> known = readOptions();
        known.add(TTL);
        known.add(CONNECT_TIMEOUT);
        List<String> shown = unknown.stream().map(ShownText::of).toList();
        throw new LockConfigurationException("Unknown option" + (unknown.size() > 1 ? "s " : " ") + shown + " for the "
                + backendName + " backend in '" + uri + "'; known options: " + known);
    }

    /** The options given but never read (names matched ignoring case), sorted: what the locker reports as unknown. */
    public Set<String> unreadOptions() {
        Set<String> unread = new TreeSet<>();
        for (String given : options.keySet()) {
            if (read.stream().noneMatch(given::equalsIgnoreCase)) {
                unread.add(given);
            }
        }
        return unread;
    }

    /** The options read so far, sorted: listed in the error for an unknown option. */
    public Set<String> readOptions() {
        return new TreeSet<>(read);
    }

    @Override
    public String toString() {
        return "BackendConfig[" + uri + ", options=" + options.keySet() + ", leaseTime=" + DurationText.of(leaseTime)
                + (lockDelay.isZero() ? "" : ", lockDelay=" + DurationText.of(lockDelay))
                + "]";
    }
}
