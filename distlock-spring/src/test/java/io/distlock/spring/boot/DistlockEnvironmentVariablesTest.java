package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.testing.ZooKeeperEnsemble;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * {@code distlock.*} from environment variables, as a container sets them: Spring Boot's relaxed binding lower-cases
 * map keys ({@code DISTLOCK_OPTIONS_PASSWORDFILE} arrives as option {@code passwordfile}). Against a real ZooKeeper
 * server, as a digest user.
 */
class DistlockEnvironmentVariablesTest {

    private static final String PASSWORD = "env-" + UUID.randomUUID();

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistlockAutoConfiguration.class));

    /** A runner whose only source of {@code distlock.*} is {@code variables}, as the process environment. */
    private ApplicationContextRunner withEnvironment(Map<String, Object> variables) {
        return runner.withInitializer(context -> context.getEnvironment()
                .getPropertySources()
                .addFirst(new SystemEnvironmentPropertySource(
                        StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables)));
    }

    @Test
    void camelCaseOptions_fromEnvironmentVariables_areAccepted(@TempDir Path dir) throws Exception {
        Path passwordFile = Files.writeString(dir.resolve("redis-password"), PASSWORD);
        withEnvironment(Map.of(
                        "DISTLOCK_URI",
                        "zk://" + ZK.connectString() + "/env",
                        "DISTLOCK_OPTIONS_USER",
                        "app",
                        "DISTLOCK_OPTIONS_PASSWORDFILE",
                        passwordFile.toString(),
                        "DISTLOCK_OPTIONS_SESSIONTIMEOUT",
                        "15s"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(DistlockProperties.class).getOptions())
                            .as("what relaxed binding makes of the variables")
                            .containsKeys("passwordfile", "sessiontimeout");
                    RemoteLocker locker = context.getBean(RemoteLocker.class);
                    assertThat(locker.tryLock("env-orders")).isPresent().get().satisfies(lock -> lock.release());
                    assertThatThrownBy(() -> RemoteLockers.open("zk://" + ZK.connectString() + "/env")
                                    .close())
                            .as("the base path is the digest user's: the password was read from the file")
                            .isInstanceOf(LockBackendException.class)
                            .hasMessageContaining("digest:app");
                });
    }
}
