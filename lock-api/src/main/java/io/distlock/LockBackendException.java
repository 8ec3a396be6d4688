package io.distlock;

/**
 * The store could not be reached, timed out, or answered with an error. The operation that threw it left nothing held
 * in the store, or left only what the lease will free when it runs out (the message says which).
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with a message that names the store and what failed. */
    public LockBackendException(String message) {
        super(message);
    }

    /** Creates the exception with a message that names the store and what failed, and the client's exception. */
    public LockBackendException(String message, Throwable cause) {
        super(message, cause);
    }
}
