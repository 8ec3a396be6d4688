package io.distlock.lockctl.bench;

/** A benchmark run that could not be completed: a worker failed, or the settings are unusable. */
public final class BenchException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** With a message for the user. */
    public BenchException(String message) {
        super(message);
    }
}
