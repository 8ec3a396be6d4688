package io.distlock.toolkit;

/**
 * A caller's text (a key, an option's value, a name) as an error message shows it: at most its first {@value
 * #MAX_CHARS} characters, then {@code ...}, each control character written as a backslash, {@code u} and its four hex
 * digits (a line feed as {@code 000a}), never half a surrogate pair. A message that quotes what it refuses then stays
 * one short line whatever was passed: a megabyte of text, or a line feed that would forge a log line.
 *
 * <p>For the messages of the locker and of backends that quote a value they refuse.
 */
public final class ShownText {

    /** How many characters of the text are shown at most. */
    public static final int MAX_CHARS = 40;

    private ShownText() {}

    /**
     * The text as a message shows it, for quoting between {@code '} and {@code '}.
     *
     * @throws NullPointerException if {@code text} is null
     */
    public static String of(String text) {
        int end = Math.min(text.length(), MAX_CHARS);
        if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a character
        }
        StringBuilder shown = new StringBuilder(end + 8);
        for (int i = 0; i < end; i++) {
            char c = text.charAt(i);
            if (Character.isISOControl(c)) {
                shown.append(String.format("\\u%04x", (int) c));
            } else {
                shown.append(c);
            }
        }
        return end < text.length() ? shown.append("...").toString() : shown.toString();
    }
}
