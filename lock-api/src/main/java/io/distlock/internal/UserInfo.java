package io.distlock.internal;

import io.distlock.spi.Redaction;
import java.util.regex.Pattern;

/**
 * Finds credentials ({@code user:password@}) in a store URI's raw text, before {@link java.net.URI} reads it: the one
 * rule that the locker's refusal and {@link Redaction} share.
 *
 * <p>{@code java.net.URI} ends the authority at the first {@code /}, {@code ?} or {@code #}, so a password holding one
 * of them ({@code redis://default:s3cr/et@h:6379}) would leave it an authority without {@code @} and the secret in
 * the path. Here the authority is what follows {@code //} up to the first {@code /}, {@code ?} or {@code #}, and the
 * URI carries user-info when that authority holds an {@code @}, or when it is not a host list ({@code
 * host[:port][,host[:port]...]}, a port being digits) while an {@code @} comes later: {@code admin:s3cr} before
 * {@code /et@h} is no host list. An {@code @} after a well-formed host list is the path's or the query's ({@code
 * zk://h:2181/locks@x}, {@code ?x=a@b}). The user-info runs to the URI's last {@code @}: a password may hold
 * {@code @} too, and hiding a little more than the user-info in a refused URI costs nothing.
 *
 * <p>One reading stays ambiguous and is taken as {@code java.net.URI} takes it: a password whose part before its first
 * {@code /}, {@code ?} or {@code #} is a port number ({@code user:123/x@h} reads as host {@code user}, port 123).
 */
public final class UserInfo {

    private static final Pattern SCHEME_AND_SLASHES = Pattern.compile("\\s*[A-Za-z][A-Za-z0-9+.-]*://");
    private static final String HOST = "\\s*(?:\\[[^\\]/?#@\\s]*\\]|[^:@/?#,\\[\\]\\s]+)(?::[0-9]{1,5})?\\s*";
    private static final Pattern HOST_LIST = Pattern.compile(HOST + "(?:," + HOST + ")*");

    private UserInfo() {}

    /** Whether the lock URI {@code uri} ({@code scheme://...}) carries user-info. */
    public static boolean present(String uri) {
        java.util.regex.Matcher start = SCHEME_AND_SLASHES.matcher(uri);
        return start.lookingAt() && end(uri, start.end()) >= 0;
    }

    /**
     * The index of the {@code @} that ends the user-info of the URI whose authority starts at {@code from} (just after
     * its {@code //}) in {@code uri}, a text without white space; -1 if it carries none.
     */
    public static int end(String uri, int from) {
        int lastAt = uri.lastIndexOf('@');
        if (lastAt < from) {
            return -1;
        }
        int authorityEnd = from;
        while (authorityEnd < uri.length() && "/?#".indexOf(uri.charAt(authorityEnd)) < 0) {
            authorityEnd++;
        }
        String authority = uri.substring(from, authorityEnd);
        boolean hostList = authority.isEmpty() || HOST_LIST.matcher(authority).matches();
        return authority.indexOf('@') >= 0 || !hostList ? lastAt : -1;
    }
}
