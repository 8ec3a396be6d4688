package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockObserver;
import io.distlock.RemoteLocker;
import io.distlock.micrometer.MicrometerLockObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The {@link MicrometerLockObserver} auto-configured beside a {@link MeterRegistry}, on the in-memory store. */
class DistlockMetricsAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DistlockAutoConfiguration.class, DistlockMetricsAutoConfiguration.class))
            .withPropertyValues("distlock.uri=memory:");

    private static void lockOnce(RemoteLocker locker) throws InterruptedException {
        locker.lock("metered", Duration.ofSeconds(10)).release();
    }

    private static long granted(MeterRegistry meters) {
        return meters.get(MicrometerLockObserver.ACQUIRE)
                .tags("store", "memory", "outcome", "granted")
                .timer()
                .count();
    }

    @Test
    void aMeterRegistry_getsTheLockersMeters() {
        MeterRegistry meters = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> meters).run(context -> {
            assertThat(context).hasSingleBean(MicrometerLockObserver.class);
            lockOnce(context.getBean(RemoteLocker.class));
            assertThat(granted(meters)).isEqualTo(1);
        });
    }

    @Test
    void anObservationRegistry_getsEachAcquisitionAsAnObservation() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(ObservationRegistry.class, () -> observations)
                .run(context -> lockOnce(context.getBean(RemoteLocker.class)));
        TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsWithNameEqualTo(MicrometerLockObserver.ACQUISITION_OBSERVATION, 1);
    }

    @Test
    void theApplicationsOwnObserver_wins() {
        MeterRegistry meters = new SimpleMeterRegistry();
        LockObserver own = MicrometerLockObserver.builder(meters).keyTag(true).build();
        runner.withBean(MeterRegistry.class, () -> meters)
                .withBean(LockObserver.class, () -> own)
                .run(context -> {
                    assertThat(context).getBeans(LockObserver.class).hasSize(1).containsValue(own);
                    lockOnce(context.getBean(RemoteLocker.class));
                    assertThat(meters.get(MicrometerLockObserver.ACQUIRE)
                                    .tag("key", "metered")
                                    .timer()
                                    .count())
                            .isEqualTo(1);
                });
    }

    @Test
    void withoutAMeterRegistry_orWithoutTheModule_thereIsNoObserver() {
        runner.run(context -> assertThat(context).doesNotHaveBean(MicrometerLockObserver.class));
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withClassLoader(new FilteredClassLoader(MicrometerLockObserver.class))
                .run(context -> assertThat(context).doesNotHaveBean(LockObserver.class));
    }
}
