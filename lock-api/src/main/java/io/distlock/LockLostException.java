package io.distlock;

/**
 * A lock was lost while the work it guarded ran: its lease ran out or the store dropped it, so another owner may have
 * run the same critical section concurrently. Thrown by {@link RemoteLocker#withLock} after the work finished.
 */
public class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String key;

    /** Creates the exception for the lost lock on {@code key}. */
    public LockLostException(String key) {
        super("Lock '" + key + "' was lost while the guarded work ran; another owner may have held it meanwhile");
        this.key = key;
    }

    /** The key whose lock was lost. */
    public String key() {
        return key;
    }
}
