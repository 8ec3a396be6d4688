package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.RemoteLocker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.curator.utils.PathUtils;
import org.junit.jupiter.api.Test;

class KeyCodecTest {

    private static final List<String> ODD_KEYS = List.of(
            "plain-key_1.2~3",
            "a/b/c",
            "/",
            "//",
            "zookeeper",
            "Zookeeper",
            ".",
            "..",
            "...",
            "%",
            "%2F",
            "a%2Fb",
            "ключ",
            "€🔒",
            "tab\there",
            "nul\u0000byte",
            "\uFFFF\uFFF0",
            " ",
            "x".repeat(RemoteLocker.MAX_KEY_BYTES),
            "я".repeat(RemoteLocker.MAX_KEY_BYTES / 2));

    @Test
    void encode_roundTrips_oddKeys() {
        for (String key : ODD_KEYS) {
            assertThat(KeyCodec.decode(KeyCodec.encode(key))).as(key).isEqualTo(key);
        }
    }

    @Test
    void encode_givesValidNodeNames() {
        for (String key : ODD_KEYS) {
            String name = KeyCodec.encode(key);
            assertThat(name).as(key).doesNotContain("/").isNotIn(".", "..", "zookeeper");
            PathUtils.validatePath("/" + name);
            PathUtils.validatePath("/base/" + name);
        }
    }

    @Test
    void encode_isInjective_onOddAndRandomKeys() {
        Map<String, String> seen = new HashMap<>();
        Random random = new Random(42);
        List<String> keys = new java.util.ArrayList<>(ODD_KEYS);
        for (int i = 0; i < 20_000; i++) {
            StringBuilder key = new StringBuilder();
            int length = 1 + random.nextInt(6);
            int[] alphabet = "a/.%zZ~-_ é€🔒".codePoints().toArray();
            for (int j = 0; j < length; j++) {
                key.appendCodePoint(alphabet[random.nextInt(alphabet.length)]);
            }
            keys.add(key.toString());
        }
        for (String key : keys) {
            String previous = seen.put(KeyCodec.encode(key), key);
            assertThat(previous == null || previous.equals(key))
                    .as("'" + key + "' and '" + previous + "' encode alike")
                    .isTrue();
        }
    }

    @Test
    void encode_keepsUsualKeysReadable() {
        assertThat(KeyCodec.encode("account:42")).isEqualTo("account%3A42");
        assertThat(KeyCodec.encode("orders/42")).isEqualTo("orders%2F42");
        assertThat(KeyCodec.encode("report-2024_01.csv~")).isEqualTo("report-2024_01.csv~");
        assertThat(KeyCodec.encode("é")).isEqualTo("%C3%A9");
        assertThat(KeyCodec.encode("..")).isEqualTo("%2E%2E");
        assertThat(KeyCodec.encode("zookeeper")).isEqualTo("%7Aookeeper");
    }

    @Test
    void encode_rejectsUnpairedSurrogates_insteadOfMergingThem() {
        assertThatThrownBy(() -> KeyCodec.encode("a\uD800"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate");
        assertThatThrownBy(() -> KeyCodec.encode("\uDC00b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void decode_rejectsWhatEncodeNeverProduces() {
        assertThatThrownBy(() -> KeyCodec.decode("a/b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KeyCodec.decode("%G1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KeyCodec.decode("%4")).isInstanceOf(IllegalArgumentException.class);
    }
}
