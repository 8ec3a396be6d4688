package io.distlock.internal;

import io.distlock.Capabilities;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockException;
import io.distlock.LockObserver;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.spi.Redaction;
import io.distlock.toolkit.DurationText;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.regex.Pattern;

/** Turns a URI and builder settings into an open {@link RemoteLocker}: parsing, discovery, option checks. */
public final class LockerFactory {

    private static final String TTL = BackendConfig.TTL;
    private static final String CONNECT_TIMEOUT = BackendConfig.CONNECT_TIMEOUT;

    static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);
    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** A scheme alone, possibly with options: {@code memory:} or {@code memory:?ttl=5s}. */
    private static final Pattern BARE_SCHEME = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*:)(\\?.*)?");

    private LockerFactory() {}

    /**
     * Opens a locker whose loss listeners run on {@code listenerExecutor} (empty: a thread of the locker's own) and
     * whose locks report to {@code observer}, storing {@code ownerLabel} in every owner id, warning of locks at risk by {@code atRiskThreshold}; see {@link io.distlock.RemoteLockerBuilder#build()} for what is thrown.
     */
    public static RemoteLocker open(
            String rawUri,
            Map<String, String> builderOptions,
            Optional<Duration> leaseTime,
            Optional<Duration> connectTimeout,
            Optional<Duration> lockDelay,
            Optional<LockBackendProvider> explicitProvider,
            Ticker ticker,
            Clock clock,
            Optional<Executor> listenerExecutor,
            LockObserver observer,
            String ownerLabel,
            Optional<Duration> atRiskThreshold) {
        refuseCredentials(rawUri);
        URI uri = parse(rawUri);
        refuseFragment(uri, rawUri);
        Map<String, String> options = queryOptions(uri, rawUri);
        for (Map.Entry<String, String> e : builderOptions.entrySet()) {
            if (options.containsKey(e.getKey())) {
                throw new LockConfigurationException(
                        "Option '" + e.getKey() + "' is given both in the URI and in the builder; give it once");
            }
            options.put(e.getKey(), e.getValue());
        }
        Duration ttl = take(options, TTL, leaseTime, DEFAULT_LEASE_TIME, rawUri);
        Duration connect = take(options, CONNECT_TIMEOUT, connectTimeout, DEFAULT_CONNECT_TIMEOUT, rawUri);
        Duration delay = take(options, BackendConfig.LOCK_DELAY, lockDelay, Duration.ZERO, rawUri);
        if (delay.isNegative()) {
            throw new LockConfigurationException("Option 'lockDelay' must not be negative, got "
                    + DurationText.of(delay) + " in lock URI '" + Redaction.uri(rawUri) + "'");
        }

        LockBackendProvider provider = explicitProvider.orElseGet(() -> provider(uri.getScheme()));
        BackendConfig config = new BackendConfig(withoutQuery(uri), options, ttl, connect, delay, ticker, clock);
        LockBackend backend;
        try {
            backend = provider.open(config);
        } catch (LockException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockBackendException(
                    "The " + provider.name() + " backend could not open '" + withoutQuery(uri) + "': " + e, e);
        }
        try {
            config.rejectUnknownOptions(provider.name());
            if (!delay.isZero() && !backend.capabilities().offers(Capabilities.Operation.LOCK_DELAY)) {
                throw new LockConfigurationException("The " + provider.name() + " backend offers no lock-delay (it"
                        + " offers " + backend.capabilities().operations() + "), so option 'lockDelay="
                        + DurationText.of(delay) + "' cannot be kept: leave it out, or see the backend's"
                        + " documentation for why its store cannot keep a key after an unclean end");
            }
        } catch (LockConfigurationException e) {
            backend.close();
            throw e;
        }
        return new DefaultRemoteLocker(
                provider.name(),
                backend,
                ttl,
                ticker,
                clock,
                listenerExecutor,
                new Observing(observer, uri.getScheme()),
                ownerLabel,
                atRiskThreshold,
                delay);
    }

    /**
     * Credentials in a URI's user-info part are refused on every backend, with the reason: a URI is logged, shown and
     * kept in configuration repositories, so it must carry no secret. Read on the raw text ({@link UserInfo}), so that a
     * password holding {@code /}, {@code ?} or {@code #} is refused as well.
     */
    private static void refuseCredentials(String rawUri) {
        if (UserInfo.present(rawUri)) {
            throw new LockConfigurationException("Lock URI '" + Redaction.uri(rawUri) + "' carries credentials before"
                    + " '@'; distlock takes none in a URI, which ends up in logs and configuration repositories: give"
                    + " them as options 'user' and 'password' (or 'passwordFile' / 'passwordEnv'), e.g. through"
                    + " RemoteLockerBuilder.option");
        }
    }

    /**
     * A fragment is refused: a lock URI has no use for one, and a {@code #} typed into an option's value ({@code
     * password=ab#cd}) would otherwise cut the value short without a word.
     */
    private static void refuseFragment(URI uri, String rawUri) {
        if (uri.getRawFragment() != null) {
            throw new LockConfigurationException("Lock URI '" + Redaction.uri(rawUri) + "' has a '#', which would end"
                    + " it; a lock URI takes no fragment: write a '#' inside an option's value as %23");
        }
    }

    static URI parse(String rawUri) {
        String trimmed = rawUri.trim();
        if (trimmed.isEmpty()) {
            throw new LockConfigurationException(
                    "Lock URI must not be blank; expected e.g. memory: or zk://host:2181/locks");
        }
        // "memory:" alone is a complete URI to us; java.net.URI wants something after the colon, and would take
        // "memory:?ttl=5s" as opaque, dropping its query: both become "memory:/...".
        java.util.regex.Matcher bare = BARE_SCHEME.matcher(trimmed);
        String text = bare.matches() ? bare.group(1) + "/" + (bare.group(2) == null ? "" : bare.group(2)) : trimmed;
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw new LockConfigurationException(
                    "Malformed lock URI '" + Redaction.uri(rawUri) + "': " + e.getReason() + " at index " + e.getIndex()
                            + "; expected e.g. memory: or zk://host:2181/locks?ttl=30s",
                    e);
        }
        if (uri.getScheme() == null) {
            throw new LockConfigurationException("Lock URI '" + Redaction.uri(rawUri)
                    + "' has no scheme; expected scheme://hosts/path, e.g. zk://host:2181/locks or memory:");
        }
        return uri;
    }

    private static Map<String, String> queryOptions(URI uri, String rawUri) {
        Map<String, String> options = new LinkedHashMap<>();
        String query = uri.getRawQuery();
        if (query == null || query.isEmpty()) {
            return options;
        }
        String previous = "";
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0 && Redaction.isSecret(previous)) {
                throw new LockConfigurationException("The value of option '" + previous + "' in lock URI '"
                        + Redaction.uri(rawUri) + "' holds a '&', which separates options: write it %26");
            }
            if (eq <= 0) {
                throw new LockConfigurationException("Malformed option '" + Redaction.option(pair) + "' in lock URI '"
                        + Redaction.uri(rawUri) + "'; expected name=value");
            }
            String name = URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            previous = name;
            if (options.put(name, value) != null) {
                throw new LockConfigurationException(
                        "Option '" + name + "' appears twice in lock URI '" + Redaction.uri(rawUri) + "'");
            }
        }
        return options;
    }

    private static Duration take(
            Map<String, String> options, String name, Optional<Duration> typed, Duration fallback, String rawUri) {
        // Matched ignoring case, as BackendConfig matches a backend's options (Spring Boot lower-cases names).
        List<String> given =
                options.keySet().stream().filter(name::equalsIgnoreCase).toList();
        if (given.size() > 1) {
            throw new LockConfigurationException("Option '" + name + "' is given more than once, as " + given
                    + " (option names are matched ignoring case); give it once");
        }
        String raw = given.isEmpty() ? null : options.remove(given.get(0));
        if (raw != null && typed.isPresent()) {
            throw new LockConfigurationException("Option '" + name + "' is given both in the URI '"
                    + Redaction.uri(rawUri) + "' and in the builder; give it once");
        }
        if (raw != null) {
            return DurationText.parseOption(name, raw);
        }
        return typed.orElse(fallback);
    }

    /** The provider for {@code scheme}, found with the context class loader (else lock-api's). */
    public static LockBackendProvider provider(String scheme) {
        return ProviderRegistry.forScheme(scheme, classLoader());
    }

    private static URI withoutQuery(URI uri) {
        if (uri.getRawQuery() == null) {
            return uri;
        }
        String s = uri.toString();
        return URI.create(s.substring(0, s.indexOf('?')));
    }

    private static ClassLoader classLoader() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : LockerFactory.class.getClassLoader();
    }
}
