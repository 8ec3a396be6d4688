package io.distlock.kit;

import java.net.URI;

/** Reads the parts of a lock URI the kit needs, accepting a bare {@code scheme:} as the locker does. */
final class KitUris {

    private KitUris() {}

    /** {@code uri} as a {@link URI}; a bare {@code memory:} or {@code memory:?a=b} becomes {@code memory:/...}. */
    static URI parse(String uri) {
        String trimmed = uri.trim();
        return URI.create(
                trimmed.matches("[A-Za-z][A-Za-z0-9+.-]*:(\\?.*)?") ? trimmed.replaceFirst(":", ":/") : trimmed);
    }

    /** The scheme of {@code uri}, lower case. */
    static String scheme(String uri) {
        return parse(uri).getScheme().toLowerCase(java.util.Locale.ROOT);
    }

    /** Whether {@code uri}'s query gives option {@code name}. */
    static boolean hasOption(String uri, String name) {
        String query = parse(uri).getRawQuery();
        if (query == null) {
            return false;
        }
        for (String pair : query.split("&")) {
            if (pair.equals(name) || pair.startsWith(name + "=")) {
                return true;
            }
        }
        return false;
    }
}
