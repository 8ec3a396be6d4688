package io.distlock.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What {@link Redaction#uri} hides: user-info, whatever its password holds, and secret options' whole values. */
class RedactionTest {

    private static final String SECRET_START = "S3CR";
    private static final String SECRET_END = "ET9";

    @ParameterizedTest
    @ValueSource(strings = {"/", "?", "#", "@", "/?#@", "//", "@h:1/"})
    void uri_passwordWithUriDelimiters_hidesTheWholePassword(String delimiter) {
        String password = SECRET_START + delimiter + SECRET_END;
        for (String uri : new String[] {
            "redis://default:" + password + "@h:6379",
            "zk://admin:" + password + "@h1:2181,h2:2181/locks?ttl=5s",
            "etcd+https://root:" + password + "@[::1]:2379/locks",
            "cassandra://cassandra:" + password + "@h/ks",
            "memory://u:" + password + "@space"
        }) {
            String shown = Redaction.uri(uri);
            assertThat(shown).as(uri).doesNotContain(SECRET_START).doesNotContain(SECRET_END);
            assertThat(shown).as(uri).contains(Redaction.HIDDEN + "@");
        }
    }

    @Test
    void uri_passwordWithSlashInACommandLine_hidesItInEveryUri() {
        String command = "lockctl bench redis://u:" + SECRET_START + "/x@h:6379 zk://a:b/" + SECRET_END
                + "@h:2181/locks --threads 2";
        assertThat(Redaction.uri(command))
                .doesNotContain(SECRET_START)
                .doesNotContain(SECRET_END)
                .startsWith("lockctl bench redis://" + Redaction.HIDDEN + "@h:6379 zk://" + Redaction.HIDDEN)
                .endsWith(" --threads 2");
    }

    @Test
    void uri_secretOptionWithHash_hidesTheWholeValue() {
        assertThat(Redaction.uri("memory:?password=" + SECRET_START + "#" + SECRET_END + "&ttl=5s"))
                .isEqualTo("memory:?password=" + Redaction.HIDDEN + "&ttl=5s");
        assertThat(Redaction.uri("zk://h:2181/locks?ttl=5s&password=" + SECRET_START + "#" + SECRET_END))
                .isEqualTo("zk://h:2181/locks?ttl=5s&password=" + Redaction.HIDDEN);
    }

    @Test
    void uri_secretOptionWithAmpersand_hidesTheWholeValue() {
        assertThat(Redaction.uri("memory:?password=" + SECRET_START + "&" + SECRET_END + "&ttl=5s"))
                .isEqualTo("memory:?password=" + Redaction.HIDDEN + "&ttl=5s");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "zk://h:2181/locks@x",
                "zk://h1:2181,h2/a@b/c@d",
                "etcd://[::1]:2379/keys@2024?ttl=5s",
                "memory:?x=a@b",
                "redis://h:6379?x=a@b&y=c",
                "memory:///space@x",
                "memory:",
                "zk://h:2181/locks?ttl=5s#frag"
            })
    void uri_atSignInPathOrQuery_isShownAsIs(String uri) {
        assertThat(Redaction.uri(uri)).isEqualTo(uri);
    }
}
