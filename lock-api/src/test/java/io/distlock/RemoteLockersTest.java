package io.distlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.memory.MemoryLockBackendProvider;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RemoteLockersTest {

    @AfterEach
    void clearOverride() {
        System.clearProperty(RemoteLockers.PROVIDER_PROPERTY);
    }

    @Test
    void open_memory_givesAWorkingLocker() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("memory:")) {
            try (RemoteLock lock = locker.lock("a", Duration.ofSeconds(1))) {
                assertThat(lock.isHeld()).isTrue();
                assertThat(lock.key()).isEqualTo("a");
            }
        }
    }

    @Test
    void open_unknownScheme_listsTheSchemesAvailable() {
        assertThatThrownBy(() -> RemoteLockers.open("zoo://localhost/x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Unknown lock URI scheme 'zoo'")
                .hasMessageContaining("available: ")
                .hasMessageContaining("memory");
    }

    @Test
    void open_brokenProviderOnClasspath_isSkipped() {
        // src/test/resources lists a provider whose constructor throws: discovery logs it and goes on.
        try (RemoteLocker locker = RemoteLockers.open("memory://skip-broken")) {
            assertThat(locker.tryLock("k")).isPresent();
        }
    }

    @Test
    void open_malformedUri_namesTheProblem() {
        assertThatThrownBy(() -> RemoteLockers.open("zk://host:2181/a b"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Malformed lock URI 'zk://host:2181/a b'");
        assertThatThrownBy(() -> RemoteLockers.open("no-scheme-here"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("has no scheme");
        assertThatThrownBy(() -> RemoteLockers.open("  "))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("must not be blank");
        assertThatThrownBy(() -> RemoteLockers.open((String) null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void open_unknownOption_isRejectedWithTheKnownOnes() {
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?tll=5s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Unknown option [tll] for the memory backend")
                .hasMessageContaining("ttl");
    }

    @Test
    void open_badOptionValues_areRejected() {
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?ttl=soon"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Option 'ttl' must be a duration");
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?ttl=0s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Option 'ttl' must be positive");
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?ttl=1s&ttl=2s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("appears twice");
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?ttl"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("expected name=value");
    }

    @Test
    void open_lockerOptionsInAnotherCase_areReadLikeEveryOption() {
        // Spring Boot lower-cases option names from environment variables; backends' options match ignoring case.
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?TTL=soon"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Option 'ttl' must be a duration");
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?connecttimeout=0s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Option 'connectTimeout' must be positive");
        assertThatThrownBy(() -> RemoteLockers.open("memory:/?ttl=1s&Ttl=2s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("given more than once");
    }

    @Test
    void builder_optionGivenTwice_isRejected() {
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("memory:/?ttl=5s")
                        .leaseTime(Duration.ofSeconds(3))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("given both");
    }

    @Test
    void builder_badSettings_areRejected() {
        assertThatThrownBy(() -> RemoteLockers.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("No URI given");
        assertThatThrownBy(() -> RemoteLockers.builder().leaseTime(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime must be positive");
        assertThatThrownBy(() -> RemoteLockers.builder().connectTimeout(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("connectTimeout");
    }

    @Test
    void builder_leaseTime_isUsed() {
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("memory://lease-time")
                .leaseTime(Duration.ofMinutes(7))
                .build()) {
            RemoteLock lock = locker.tryLock("k").orElseThrow();
            assertThat(lock.validUntil()).isAfter(java.time.Instant.now().plus(Duration.ofMinutes(6)));
            lock.close();
        }
    }

    @Test
    void overrideProperty_choosesTheProvider_andChecksItsScheme() {
        System.setProperty(RemoteLockers.PROVIDER_PROPERTY, MemoryLockBackendProvider.class.getName());
        try (RemoteLocker locker = RemoteLockers.open("memory://override")) {
            assertThat(locker.tryLock("k")).isPresent();
        }
        assertThatThrownBy(() -> RemoteLockers.open("zk://h:1/x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("not the scheme 'zk'");
        System.setProperty(RemoteLockers.PROVIDER_PROPERTY, "com.example.Missing");
        assertThatThrownBy(() -> RemoteLockers.open("memory:"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Cannot load the provider com.example.Missing");
    }

    @Test
    void memoryUri_withPathSegments_isRejected() {
        assertThatThrownBy(() -> RemoteLockers.open("memory:a/b"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("expected memory: or memory://name");
    }
}
