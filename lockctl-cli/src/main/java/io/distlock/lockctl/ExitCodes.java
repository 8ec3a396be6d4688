package io.distlock.lockctl;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockTimeoutException;

/** lockctl's exit codes; {@code lockctl run} otherwise exits with its command's code. Listed in every help text. */
final class ExitCodes {

    /** Done; for {@code run}: the command exited with 0. */
    static final int OK = 0;
    /** A benchmark worker or a conformance test failed, {@code locks break} was not confirmed, or another error. */
    static final int FAILED = 1;
    /**
     * Bad arguments: unknown option, malformed or unknown lock URI, negative count, missing command, a primitive the
     * store does not offer, a semaphore's N that differs from its holders', an operation the store does not offer
     * ({@code locks}), {@code locks break} without a terminal to ask at and without {@code --yes}.
     */
    static final int USAGE = 2;
    /** The store could not be reached or failed. */
    static final int STORE_UNAVAILABLE = 69;
    /** {@code run}: the lock is held by someone else ({@code --wait 0}) or was not granted within {@code --wait}. */
    static final int BUSY = 75;
    /** {@code run}: the lock was lost while the command ran; the command was terminated. */
    static final int LOCK_LOST = 76;
    /**
     * {@code run --on-release-request=terminate}: somebody asked the holder to let go ({@code lockctl locks
     * request-release}, {@code RemoteLocker.requestRelease}); the command was terminated and the lock released.
     */
    static final int RELEASE_REQUESTED = 77;
    /** {@code run}: the command was found but could not be started. */
    static final int CANNOT_EXECUTE = 126;
    /** {@code run}: the command was not found. */
    static final int NOT_FOUND = 127;

    /** The footer of every help text. */
    static final String[] FOOTER = {
        "",
        "Exit codes:",
        "  0    done (run: the command's own exit code, 128+N if it died of signal N)",
        "  1    a benchmark worker or a conformance test failed; locks break: not confirmed",
        "  2    bad arguments (unknown option or scheme, malformed URI, bad count or duration, a primitive or an",
        "       operation the store does not offer, a semaphore's N other than its holders', locks break without a",
        "       terminal to ask at and without --yes)",
        "  69   the store could not be reached or failed",
        "  75   run: the lock (read lock, write lock, permit) is busy (--wait 0) or was not granted within --wait",
        "  76   run: the lock was lost while the command ran; the command was terminated",
        "  77   run --on-release-request=terminate: asked to let go (locks request-release); the command was",
        "       terminated and the lock released",
        "  126  run: the command could not be started; 127: the command was not found",
        "Errors are one line; --verbose adds the stack trace."
    };

    private ExitCodes() {}

    /** The exit code for an exception that ended a command. */
    static int of(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof LockConfigurationException
                    || t instanceof IllegalArgumentException
                    || t instanceof UnsupportedOperationException) {
                return USAGE;
            }
            if (t instanceof LockTimeoutException) {
                return BUSY;
            }
            if (t instanceof LockBackendException) {
                return STORE_UNAVAILABLE;
            }
        }
        return FAILED;
    }
}
