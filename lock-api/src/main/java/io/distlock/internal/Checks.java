package io.distlock.internal;

import io.distlock.RemoteLocker;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.ShownText;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Argument checks shared by every locker, so every backend rejects bad input with the same clear message. */
public final class Checks {

    private Checks() {}

    /**
     * Checks a lock key: not null, not blank, valid Unicode (no unpaired surrogate, which has no UTF-8 form), at
     * most {@link RemoteLocker#MAX_KEY_BYTES} bytes in UTF-8. The one place that decides which keys are valid: every
     * backend accepts every key that passes.
     *
     * @return the key
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if blank, not valid Unicode, or too long
     */
    public static String key(String key) {
        Objects.requireNonNull(key, "Lock key must not be null");
        if (key.isBlank()) {
            throw new IllegalArgumentException("Lock key must not be blank, got '" + ShownText.of(key) + "'");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(String.format(
                        "Lock key must be valid Unicode: it has an unpaired surrogate U+%04X at index %d", (int) c, i));
            }
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > RemoteLocker.MAX_KEY_BYTES) {
            throw new IllegalArgumentException("Lock key is " + bytes + " bytes in UTF-8; the limit is "
                    + RemoteLocker.MAX_KEY_BYTES + " bytes: '" + ShownText.of(key) + "'");
        }
        return key;
    }

    /**
     * Checks a set of keys for a multi-key lock: not empty, every key valid, no key twice.
     *
     * @return the keys in canonical (natural, ascending) order
     */
    public static List<String> keys(Collection<String> keys) {
        Objects.requireNonNull(keys, "Lock keys must not be null");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("Lock keys must not be empty: give at least one key");
        }
        Set<String> seen = new HashSet<>();
        List<String> sorted = new ArrayList<>(keys.size());
        for (String key : keys) {
            key(key);
            if (!seen.add(key)) {
                throw new IllegalArgumentException(
                        "Lock key '" + ShownText.of(key) + "' appears twice among the " + keys.size() + " keys given");
            }
            sorted.add(key);
        }
        sorted.sort(null);
        return sorted;
    }

    /**
     * Checks that a duration is given and positive.
     *
     * @return the duration
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if zero or negative
     */
    public static Duration positive(Duration duration, String name) {
        Objects.requireNonNull(duration, () -> name + " must not be null");
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, got " + DurationText.of(duration));
        }
        return duration;
    }
}
