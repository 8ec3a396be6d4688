package io.distlock;

import java.time.Duration;

/** A lock was not granted within the caller's maximum wait. Nothing is left held in the store. */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final Duration maxWait;

    /**
     * Creates the exception for {@code key}, not granted within {@code maxWait}.
     *
     * @param key the key that could not be taken in time
     * @param maxWait the wait the caller allowed
     */
    public LockTimeoutException(String key, Duration maxWait) {
        super("Lock '" + key + "' was not granted within " + io.distlock.toolkit.DurationText.of(maxWait));
        this.key = key;
        this.maxWait = maxWait;
    }

    /** The key that could not be taken in time. */
    public String key() {
        return key;
    }

    /** The wait the caller allowed. */
    public Duration maxWait() {
        return maxWait;
    }
}
