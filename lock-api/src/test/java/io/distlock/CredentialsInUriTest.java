package io.distlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Credentials in a URI's user-info are refused on every scheme before any backend is looked up, whatever the password
 * holds, and shown nowhere; an {@code @} in a path or a query is not user-info.
 */
class CredentialsInUriTest {

    private static final String SECRET_START = "S3CR";
    private static final String SECRET_END = "ET9";
    private static final List<String> SCHEMES =
            List.of("memory", "zk", "zookeeper", "etcd", "etcd+https", "redis", "rediss", "redlock", "cassandra");
    private static final List<String> DELIMITERS = List.of("/", "?", "#", "@", "/?#@", "//", "@h:1/", ":");

    static Stream<String> uris() {
        List<String> uris = new ArrayList<>();
        for (String scheme : SCHEMES) {
            for (String delimiter : DELIMITERS) {
                String password = SECRET_START + delimiter + SECRET_END;
                uris.add(scheme + "://admin:" + password + "@h1:1234/locks");
                uris.add(scheme + "://admin:" + password + "@h1:1234,h2:1234,h3");
                uris.add(scheme + "://admin:" + password + "@[::1]:1234?ttl=5s");
            }
        }
        return uris.stream();
    }

    @ParameterizedTest
    @MethodSource("uris")
    void open_passwordWithUriDelimiters_isRefusedWithoutShowingIt(String uri) {
        assertThatThrownBy(() -> RemoteLockers.open(uri).close())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("carries credentials")
                .hasMessageNotContaining(SECRET_START)
                .hasMessageNotContaining(SECRET_END)
                .hasMessageNotContaining("admin");
    }

    @Test
    void open_secretOptionWithHash_refusesTheFragmentWithoutShowingTheValue() {
        assertThatThrownBy(() -> RemoteLockers.open("memory:?password=" + SECRET_START + "#" + SECRET_END)
                        .close())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("%23")
                .hasMessageNotContaining(SECRET_START)
                .hasMessageNotContaining(SECRET_END);
    }

    @Test
    void open_secretOptionWithAmpersand_namesTheProblemWithoutShowingTheValue() {
        assertThatThrownBy(() -> RemoteLockers.open("memory:?password=" + SECRET_START + "&" + SECRET_END)
                        .close())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("%26")
                .hasMessageNotContaining(SECRET_START)
                .hasMessageNotContaining(SECRET_END);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "zk://h:2181/locks@x",
                "zk://h1:2181,h2/a@b/c@d:1",
                "etcd://[::1]:2379/keys@2024?ttl=5s",
                "redis://h:6379?x=a@b",
                "cassandra://h/ks?x=a@b",
                "memory:?x=a@b"
            })
    void open_atSignInPathOrQuery_isNotTakenForCredentials(String uri) {
        Throwable thrown = catchThrowable(() -> RemoteLockers.open(uri).close());
        assertThat(thrown).isNotNull(); // no such backend in lock-api, or an unknown option
        assertThat(thrown.getMessage()).doesNotContain("carries credentials");
    }

    @Test
    void open_memorySpaceNamedWithAtSign_opens() {
        try (RemoteLocker locker = RemoteLockers.open("memory:///space@x")) {
            assertThat(locker.tryLock("k")).isPresent();
        }
    }
}
