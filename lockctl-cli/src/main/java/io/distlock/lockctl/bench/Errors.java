package io.distlock.lockctl.bench;

/** Error messages on one line, for the command line and the worker protocol. */
public final class Errors {

    private Errors() {}

    /** The innermost useful message of {@code e} and its causes, on one line. */
    public static String oneLine(Throwable e) {
        Throwable t = e;
        String message = describe(t);
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
            String inner = describe(t);
            if (!message.contains(inner)) {
                message = message + ": " + inner;
            }
        }
        return message.replaceAll("\\s*\\R\\s*", " ");
    }

    private static String describe(Throwable t) {
        return t.getMessage() == null || t.getMessage().isBlank() ? t.getClass().getSimpleName() : t.getMessage();
    }
}
