package io.distlock;

/**
 * A locker could not be opened because of how it was asked for: a malformed URI, an unknown scheme, an unknown or
 * malformed option, or a broken backend provider. The message says what was wrong and what is accepted.
 */
public class LockConfigurationException extends LockException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with a message that names the problem and what is accepted. */
    public LockConfigurationException(String message) {
        super(message);
    }

    /** Creates the exception with a message that names the problem, and its cause. */
    public LockConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
