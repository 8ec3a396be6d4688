package io.distlock;

/**
 * The locker was closed: thrown by every call made after {@link RemoteLocker#close()}, and by every call that was
 * waiting for a lock when the locker was closed (its wait ends at once; nothing is left held in the store). An {@link
 * IllegalStateException}, as a call on a closed resource is a mistake of the program, not of the store.
 */
public class LockerClosedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with a message that names the locker. */
    public LockerClosedException(String message) {
        super(message);
    }
}
