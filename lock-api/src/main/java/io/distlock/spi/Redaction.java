package io.distlock.spi;

import io.distlock.internal.UserInfo;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Hides secrets in text that may reach a message or a log line: a URI's user-info, the values of secret options. */
public final class Redaction {

    /** What stands in for a hidden value. */
    public static final String HIDDEN = "****";

    private static final Pattern TOKEN = Pattern.compile("\\S+");
    /**
     * An option, {@code ?name=value} or {@code &name=value}, and what may follow its value up to the next option: a
     * {@code #...}, and {@code &...} parts without {@code =} (a secret's {@code #} or {@code &}, typed unencoded).
     */
    private static final Pattern QUERY_PAIR = Pattern.compile("([?&])([^=&#]*)=([^&#]*)(#[^&]*)?(?:&[^=&]*(?=&|$))*");

    private Redaction() {}

    /** Whether option {@code name} holds a secret by its name (a password, a secret, a token; not a file's name). */
    public static boolean isSecret(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        boolean secret = n.contains("password") || n.contains("secret") || n.contains("token");
        return secret && !n.endsWith("file") && !n.endsWith("env");
    }

    /**
     * {@code text} with the user-info and the values of secret options of every URI in it replaced by {@value #HIDDEN}:
     * a URI, or a command line holding some. User-info is found by the rule the locker refuses it by, which a password
     * holding {@code /}, {@code ?}, {@code #} or {@code @} does not escape; a secret option's value is hidden up to the
     * next option, a {@code #} or {@code &} in it included ({@code password=ab#cd}, {@code password=ab&cd&ttl=5s}).
     */
    public static String uri(String text) {
        Matcher token = TOKEN.matcher(text);
        StringBuilder out = new StringBuilder();
        int last = 0;
        while (token.find()) {
            out.append(text, last, token.start()).append(options(withoutUserInfo(token.group())));
            last = token.end();
        }
        return out.append(text.substring(last)).toString();
    }

    private static String withoutUserInfo(String token) {
        int slashes = token.indexOf("//");
        int at = slashes < 0 ? -1 : UserInfo.end(token, slashes + 2);
        return at < 0 ? token : token.substring(0, slashes + 2) + HIDDEN + token.substring(at);
    }

    private static String options(String token) {
        Matcher m = QUERY_PAIR.matcher(token);
        StringBuilder out = new StringBuilder();
        int last = 0;
        while (m.find(last)) {
            out.append(token, last, m.start())
                    .append(m.group(1))
                    .append(m.group(2))
                    .append('=');
            if (isSecret(m.group(2))) {
                out.append(HIDDEN);
                last = m.end();
            } else {
                out.append(m.group(3));
                last = m.end(3); // what follows a '#' may hold options of its own
            }
        }
        return out.append(token.substring(last)).toString();
    }

    /** A {@code name=value} pair with the value hidden if the name is a secret's. */
    public static String option(String pair) {
        int eq = pair.indexOf('=');
        return eq > 0 && isSecret(pair.substring(0, eq)) ? pair.substring(0, eq + 1) + HIDDEN : pair;
    }
}
