package io.distlock;

/** The root of distlock's exceptions. Unchecked: each method's Javadoc says which ones it throws and when. */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with a message that names the problem. */
    public LockException(String message) {
        super(message);
    }

    /** Creates the exception with a message that names the problem and its cause. */
    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
