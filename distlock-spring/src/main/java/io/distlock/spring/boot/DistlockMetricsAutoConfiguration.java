package io.distlock.spring.boot;

import io.distlock.LockObserver;
import io.distlock.micrometer.MicrometerLockObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * A {@link MicrometerLockObserver} for the auto-configured locker when {@code distlock-micrometer} is on the class path
 * and the application has a {@link MeterRegistry} (as Spring Boot's Actuator gives it): the locker's meters then show
 * under {@code /actuator/metrics/distlock.*}. With an {@link ObservationRegistry} each acquisition is also an
 * observation, for tracing. Backs off if the application defines a {@link LockObserver} of its own.
 *
 * <p>With observations on, Spring Boot's default observation handler also records each acquisition observation as a
 * timer, {@code distlock.acquisition}, beside the observer's own {@code distlock.acquire} (the same waits, tagged
 * {@code store}, {@code kind}, {@code outcome}). Deny one of them with a {@code MeterFilter} if you want one.
 */
@AutoConfiguration(
        before = DistlockAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
        })
@ConditionalOnClass({MicrometerLockObserver.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
public class DistlockMetricsAutoConfiguration {

    /** Creates the auto-configuration (called by Spring). */
    public DistlockMetricsAutoConfiguration() {}

    /** The observer, recording into the application's meter registry (and observation registry, if any). */
    @Bean
    @ConditionalOnMissingBean(LockObserver.class)
    public MicrometerLockObserver distlockLockObserver(
            MeterRegistry meters, ObjectProvider<ObservationRegistry> observations) {
        MicrometerLockObserver.Builder builder = MicrometerLockObserver.builder(meters);
        observations.ifUnique(builder::observations);
        return builder.build();
    }
}
