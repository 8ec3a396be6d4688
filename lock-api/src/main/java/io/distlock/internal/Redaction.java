package io.distlock.internal;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Hides secrets in text that may reach a message or a log line: a URI's user-info, the values of secret options. */
public final class Redaction {

    /** What stands in for a hidden value. */
    public static final String HIDDEN = "****";

    private static final Pattern USER_INFO = Pattern.compile("//[^/?#]*@");
    private static final Pattern QUERY_PAIR = Pattern.compile("([?&])([^=&#]*)=([^&#]*)");

    private Redaction() {}

    /** Whether option {@code name} holds a secret by its name (a password, a secret, a token; not a file's name). */
    public static boolean isSecret(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        boolean secret = n.contains("password") || n.contains("secret") || n.contains("token");
        return secret && !n.endsWith("file") && !n.endsWith("env");
    }

    /** {@code uri} with its user-info and the values of its secret options replaced by {@value #HIDDEN}. */
    public static String uri(String uri) {
        String noUser = USER_INFO.matcher(uri).replaceFirst("//" + HIDDEN + "@");
        Matcher m = QUERY_PAIR.matcher(noUser);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = isSecret(m.group(2)) ? HIDDEN : m.group(3);
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + m.group(2) + "=" + value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** A {@code name=value} pair with the value hidden if the name is a secret's. */
    public static String option(String pair) {
        int eq = pair.indexOf('=');
        return eq > 0 && isSecret(pair.substring(0, eq)) ? pair.substring(0, eq + 1) + HIDDEN : pair;
    }
}
