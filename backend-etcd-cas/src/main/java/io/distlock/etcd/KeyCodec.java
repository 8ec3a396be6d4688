package io.distlock.etcd;

/**
 * Turns a lock key (any string) into the name segment of its etcd keys, and back.
 *
 * <p>etcd keys are bytes, so a key's UTF-8 bytes are used as they are, with two exceptions: {@code '/'} becomes
 * {@code %2F} (a lock's waiters are found by listing {@code <prefix>/<name>/}, so a name must not contain the
 * separator, or the waiters of {@code a} would include those of {@code a/b}) and {@code '%'} becomes {@code %25} (so
 * that decoding is unambiguous). Spaces, non-ASCII text and everything else stay readable: {@code "счёт 42"} is
 * stored as {@code счёт 42}, {@code "orders/42"} as {@code orders%2F42}.
 */
final class KeyCodec {

    private KeyCodec() {}

    /** The name segment for {@code key}; never contains {@code '/'}. */
    static String encode(String key) {
        if (key.indexOf('/') < 0 && key.indexOf('%') < 0) {
            return key;
        }
        StringBuilder out = new StringBuilder(key.length() + 8);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '/' -> out.append("%2F");
                case '%' -> out.append("%25");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * The key whose name segment is {@code name}.
     *
     * @throws IllegalArgumentException if {@code name} is not an encoded name (a {@code '/'} or a stray {@code '%'})
     */
    static String decode(String name) {
        if (name.indexOf('%') < 0) {
            if (name.indexOf('/') >= 0) {
                throw new IllegalArgumentException("Not an encoded lock name (contains '/'): " + name);
            }
            return name;
        }
        StringBuilder out = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/') {
                throw new IllegalArgumentException("Not an encoded lock name (contains '/'): " + name);
            }
            if (c != '%') {
                out.append(c);
                continue;
            }
            String escape = name.length() >= i + 3 ? name.substring(i, i + 3) : name.substring(i);
            switch (escape) {
                case "%2F" -> out.append('/');
                case "%25" -> out.append('%');
                default ->
                    throw new IllegalArgumentException(
                            "Not an encoded lock name (bad escape '" + escape + "'): " + name);
            }
            i += 2;
        }
        return out.toString();
    }
}
