package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.LockObserver;
import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.micrometer.MicrometerLockObserver;
import io.distlock.spring.RemoteLockRegistry;
import io.distlock.testing.ZooKeeperEnsemble;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.LockRegistry;

/** The auto-configuration in Spring Boot's {@link ApplicationContextRunner}, against a real ZooKeeper server. */
class DistlockAutoConfigurationTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DistlockAutoConfiguration.class,
                    DistlockIntegrationAutoConfiguration.class,
                    DistlockHealthAutoConfiguration.class));

    private static String zkUri() {
        return "distlock.uri=zk://" + ZK.connectString() + "/boot";
    }

    private static Health health(HealthIndicator indicator) {
        Health health = indicator.health();
        assertThat(health).isNotNull();
        return health;
    }

    @Test
    void theLocker_theRegistry_andTheHealthIndicator_comeFromTheProperties() {
        runner.withPropertyValues(
                        zkUri(),
                        "distlock.lease-time=12s",
                        "distlock.connect-timeout=5s",
                        "distlock.owner-label=billing-7 on host-a",
                        "distlock.options.sessionTimeout=15s")
                .run(context -> {
                    assertThat(context).hasSingleBean(RemoteLocker.class);
                    assertThat(context.getBean(RemoteLocker.class).ownerLabel()).isEqualTo("billing-7 on host-a");
                    assertThat(context).hasSingleBean(RemoteLockRegistry.class);
                    assertThat(context).hasBean("distlockHealthIndicator");
                    Lock lock = context.getBean(LockRegistry.class).obtain("orders");
                    lock.lock();
                    try (RemoteLocker other = RemoteLockers.open("zk://" + ZK.connectString() + "/boot")) {
                        assertThat(other.tryLock("orders"))
                                .as("held in the store")
                                .isEmpty();
                        assertThat(other.inspect("orders").holders())
                                .extracting(io.distlock.LockHolder::ownerLabel)
                                .as("the label stored with the registry's lock")
                                .containsExactly("billing-7 on host-a");
                    }
                    Health health = health(context.getBean("distlockHealthIndicator", HealthIndicator.class));
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails())
                            .containsEntry("store", "zk")
                            .containsEntry("held", 1L)
                            .containsEntry("lost", 0L);
                    lock.unlock();
                    assertThat(health(context.getBean("distlockHealthIndicator", HealthIndicator.class))
                                    .getDetails())
                            .containsEntry("held", 0L);
                });
    }

    @Test
    void theLocker_isClosedWithTheContext() {
        AtomicReference<RemoteLocker> locker = new AtomicReference<>();
        runner.withPropertyValues(zkUri()).run(context -> locker.set(context.getBean(RemoteLocker.class)));
        assertThatThrownBy(() -> locker.get().tryLock("after-close")).isInstanceOf(LockerClosedException.class);
    }

    @Test
    void withoutUri_startupFails_namingTheProperty() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOfSatisfying(
                            InvalidConfigurationPropertyValueException.class,
                            e -> assertThat(e.getName()).isEqualTo("distlock.uri"))
                    .hasMessageContaining("distlock.uri=zk://");
        });
    }

    @Test
    void aBlankOwnerLabel_failsStartup_namingTheProperty() {
        runner.withPropertyValues(zkUri(), "distlock.owner-label= ").run(context -> assertThat(context)
                .hasFailed()
                .getFailure()
                .rootCause()
                .hasMessageContaining("distlock.owner-label")
                .hasMessageContaining("must not be blank"));
    }

    @Test
    void aLockDelay_reachesTheLocker_andANegativeOne_failsStartup_namingTheProperty() {
        String space = "distlock.uri=memory://boot-delay-" + System.nanoTime();
        runner.withPropertyValues(space, "distlock.lock-delay=3s", "distlock.lease-time=1s")
                .run(context -> {
                    RemoteLocker locker = context.getBean(RemoteLocker.class);
                    try (var lock = locker.lock("k")) {
                        // memory: shows an entry's end as the space keeps it: the 1 s lease plus the 3 s delay
                        java.time.Instant ends =
                                locker.inspect("k").holders().get(0).leaseEnds().orElseThrow();
                        assertThat(ends).isAfter(java.time.Instant.now().plusSeconds(2));
                        assertThat(lock.validUntil())
                                .isBefore(java.time.Instant.now().plusSeconds(2));
                    }
                });
        runner.withPropertyValues(zkUri(), "distlock.lock-delay=-1s").run(context -> assertThat(context)
                .hasFailed()
                .getFailure()
                .rootCause()
                .hasMessageContaining("distlock.lock-delay")
                .hasMessageContaining("must not be negative"));
    }

    @Test
    void anUnknownOption_failsStartup_withTheLockersMessage() {
        runner.withPropertyValues(zkUri(), "distlock.options.sesionTimeout=15s").run(context -> assertThat(context)
                .getFailure()
                .rootCause()
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sesionTimeout"));
    }

    @Test
    void withoutSpringIntegration_thereIsNoRegistry() {
        runner.withPropertyValues(zkUri())
                .withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .run(context -> {
                    assertThat(context).hasSingleBean(RemoteLocker.class);
                    assertThat(context).doesNotHaveBean(RemoteLockRegistry.class);
                });
    }

    @Test
    void withoutHealthSupport_orWhenDisabled_thereIsNoIndicator() {
        runner.withPropertyValues(zkUri())
                .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context).doesNotHaveBean("distlockHealthIndicator"));
        runner.withPropertyValues(zkUri(), "management.health.distlock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("distlockHealthIndicator"));
    }

    @Test
    void theApplicationsOwnLockerAndRegistry_win() {
        RemoteLocker own = RemoteLockers.open("memory:");
        runner.withBean(RemoteLocker.class, () -> own).run(context -> {
            assertThat(context.getBean(RemoteLocker.class)).isSameAs(own);
            assertThat(health(context.getBean("distlockHealthIndicator", HealthIndicator.class))
                            .getStatus())
                    .isEqualTo(Status.UP);
        });
        own.close();
        runner.withPropertyValues(zkUri())
                .withBean("myRegistry", LockRegistry.class, () -> new RemoteLockRegistry(RemoteLockers.open("memory:")))
                .run(context -> assertThat(context).doesNotHaveBean("remoteLockRegistry"));
    }

    @Test
    void aLockObserverBean_seesTheLocks() {
        MeterRegistry meters = new SimpleMeterRegistry();
        runner.withPropertyValues(zkUri())
                .withBean(LockObserver.class, () -> MicrometerLockObserver.create(meters))
                .run(context -> {
                    Lock lock = context.getBean(LockRegistry.class).obtain("observed");
                    lock.lock();
                    lock.unlock();
                });
        assertThat(meters.get(MicrometerLockObserver.ACQUIRE)
                        .tags("store", "zk", "kind", "lock", "outcome", "granted")
                        .timer()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void aLostLock_isCounted_andItsListenerRunsOnTheListenerExecutor() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        Executor counting = task -> {
            ran.incrementAndGet();
            task.run();
        };
        runner.withPropertyValues(zkUri())
                .withBean(DistlockAutoConfiguration.LISTENER_EXECUTOR, Executor.class, () -> counting)
                .run(context -> {
                    RemoteLock lock = context.getBean(RemoteLocker.class).lock("lost", WAIT);
                    AtomicInteger told = new AtomicInteger();
                    lock.onLost(l -> told.incrementAndGet());
                    try (CuratorFramework operator =
                            CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100))) {
                        operator.start();
                        for (String node : operator.getChildren().forPath("/boot/lost")) {
                            operator.delete().forPath("/boot/lost/" + node); // behind the holder
                        }
                    }
                    Deadlines.await(() -> told.get() == 1, WAIT, () -> "the loss reported");
                    assertThat(ran).hasPositiveValue();
                    assertThat(health(context.getBean("distlockHealthIndicator", HealthIndicator.class))
                                    .getDetails())
                            .containsEntry("lost", 1L)
                            .containsEntry("held", 0L);
                });
    }

    @Test
    void health_isDown_whileTheStoreDoesNotAnswer() {
        runner.withPropertyValues(
                        "distlock.uri=zk://" + ZK.proxiedConnectString() + "/boot", "distlock.connect-timeout=2s")
                .run(context -> {
                    HealthIndicator indicator = context.getBean("distlockHealthIndicator", HealthIndicator.class);
                    assertThat(health(indicator).getStatus()).isEqualTo(Status.UP);
                    ZK.server(0).disconnect();
                    try {
                        assertThat(health(indicator).getStatus()).isEqualTo(Status.DOWN);
                    } finally {
                        ZK.server(0).heal();
                    }
                    Deadlines.await(() -> Status.UP.equals(health(indicator).getStatus()), WAIT, () -> "UP again");
                });
    }

    @Test
    void health_againstAStoreThatStoppedAnswering_isDownWithinItsTimeout() {
        runner.withPropertyValues(
                        "distlock.uri=zk://" + ZK.proxiedConnectString() + "/boot", "distlock.connect-timeout=5s")
                .run(context -> {
                    HealthIndicator indicator = context.getBean("distlockHealthIndicator", HealthIndicator.class);
                    assertThat(health(indicator).getStatus()).isEqualTo(Status.UP);
                    ZK.server(0).disconnect();
                    try {
                        long start = System.nanoTime();
                        Health down = health(indicator);
                        Duration took = Duration.ofNanos(System.nanoTime() - start);
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(took)
                                .as("a Kubernetes probe gives up after 1 s by default; connect-timeout is 5 s")
                                .isLessThan(TestTimeouts.scaled(Duration.ofMillis(900)));
                        assertThat(down.getDetails())
                                .containsEntry("store", "zk")
                                .containsKey("error");
                    } finally {
                        ZK.server(0).heal();
                    }
                    Deadlines.await(() -> Status.UP.equals(health(indicator).getStatus()), WAIT, () -> "UP again");
                });
    }

    @Test
    void theMetadata_describesEveryProperty() throws Exception {
        String metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in)
                    .as("generated by spring-boot-configuration-processor")
                    .isNotNull();
            metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(metadata)
                .contains(
                        "\"distlock.uri\"",
                        "\"distlock.lease-time\"",
                        "\"distlock.connect-timeout\"",
                        "\"distlock.owner-label\"",
                        "\"distlock.lock-delay\"",
                        "\"distlock.options\"",
                        "\"distlock.health.probe-key\"",
                        "\"distlock.health.timeout\"",
                        "\"distlock.leader.election\"",
                        "\"distlock.leader.role\"",
                        "\"distlock.leader.identity\"",
                        "The lock store's URI");
    }
}
