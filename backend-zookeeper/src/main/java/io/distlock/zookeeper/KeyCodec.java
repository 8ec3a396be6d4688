package io.distlock.zookeeper;

import io.distlock.toolkit.ShownText;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Turns a lock key (any string) into a valid ZooKeeper node name, and back.
 *
 * <p>The encoding is percent-encoding of the key's UTF-8 bytes: the RFC 3986 unreserved characters {@code A-Z a-z 0-9
 * - . _ ~} stay as they are, every other byte becomes {@code %XX} (upper-case hex). So {@code "orders/42"} becomes
 * {@code "orders%2F42"} and {@code "счёт"} becomes {@code "%D1%81%D1%87%D1%91%D1%82"}. The names ZooKeeper reserves or
 * rejects are encoded too: {@code "."} and {@code ".."} become {@code "%2E"} and {@code "%2E%2E"}, and {@code
 * "zookeeper"} becomes {@code "%7Aookeeper"} (reserved at the root). No encoded name contains {@code '/'}, a control
 * character or a character ZooKeeper refuses in a path.
 *
 * <p>The encoding is injective, because {@link #decode} undoes it for every key ({@code decode(encode(k)) == k}), and
 * readable for the usual ASCII keys. Another program can find a key's node by applying the same encoding.
 */
final class KeyCodec {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private KeyCodec() {}

    /**
     * The node name for {@code key}.
     *
     * @throws IllegalArgumentException if the key is not valid Unicode (an unpaired surrogate has no UTF-8 form, and
     *     replacing it would make two keys share a node)
     */
    static String encode(String key) {
        if (isPlain(key)) {
            return key; // the usual key: nothing to escape, nothing to copy
        }
        byte[] bytes = utf8(key);
        StringBuilder out = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xFF;
            if (isUnreserved(c)) {
                out.append((char) c);
            } else {
                appendEscaped(out, c);
            }
        }
        String name = out.toString();
        if (name.equals(".") || name.equals("..")) {
            return name.replace(".", "%2E");
        }
        if (name.equals("zookeeper")) {
            return "%7Aookeeper";
        }
        return name;
    }

    /**
     * The key whose node name is {@code name}.
     *
     * @throws IllegalArgumentException if {@code name} is not an encoded key
     */
    static String decode(String name) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '%') {
                if (i + 2 >= name.length()) {
                    throw new IllegalArgumentException("Truncated escape in node name '" + name + "'");
                }
                int hi = Character.digit(name.charAt(i + 1), 16);
                int lo = Character.digit(name.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new IllegalArgumentException("Malformed escape in node name '" + name + "'");
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (c < 0x80 && isUnreserved(c)) {
                bytes.write(c);
            } else {
                throw new IllegalArgumentException("Character '" + c + "' is never left unescaped: '" + name + "'");
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Whether {@code key} is all unreserved characters and not a name ZooKeeper reserves: its own node name. */
    private static boolean isPlain(String key) {
        for (int i = 0; i < key.length(); i++) {
            if (!isUnreserved(key.charAt(i))) {
                return false;
            }
        }
        return !key.isEmpty() && !key.equals(".") && !key.equals("..") && !key.equals("zookeeper");
    }

    private static byte[] utf8(String key) {
        try {
            ByteBuffer buffer = StandardCharsets.UTF_8
                    .newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(key));
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            return bytes;
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(
                    "Lock key is not valid Unicode (it has an unpaired surrogate character); got '" + ShownText.of(key)
                            + "'",
                    e);
        }
    }

    private static boolean isUnreserved(int c) {
        return (c >= 'A' && c <= 'Z')
                || (c >= 'a' && c <= 'z')
                || (c >= '0' && c <= '9')
                || c == '-'
                || c == '.'
                || c == '_'
                || c == '~';
    }

    private static void appendEscaped(StringBuilder out, int c) {
        out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
    }
}
