package io.distlock.spring.boot;

import io.distlock.RemoteLocker;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * A health indicator {@code distlock} for the application's {@link RemoteLocker} when Spring Boot's health support is
 * on the class path (switch it off with {@code management.health.distlock.enabled=false}): UP if the store answered a
 * lock attempt on {@code distlock.health.probe-key} within {@code distlock.health.timeout} (500ms), DOWN with the
 * store's error or the timeout otherwise; details {@code store} (the
 * URI's scheme) and, for the auto-configured locker, {@code held} (locks held now) and {@code lost} (locks lost so
 * far).
 */
@AutoConfiguration(after = DistlockAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnSingleCandidate(RemoteLocker.class)
@ConditionalOnEnabledHealthIndicator("distlock")
public class DistlockHealthAutoConfiguration {

    /** Creates the auto-configuration (called by Spring). */
    public DistlockHealthAutoConfiguration() {}

    /** The indicator, named {@code distlock} after its bean. */
    @Bean
    @ConditionalOnMissingBean(name = "distlockHealthIndicator")
    public HealthIndicator distlockHealthIndicator(
            RemoteLocker locker, DistlockProperties properties, ObjectProvider<LockStatistics> statistics) {
        Duration timeout = properties.getHealth().getTimeout();
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new InvalidConfigurationPropertyValueException(
                    DistlockProperties.PREFIX + ".health.timeout", timeout, "must be positive, e.g. 500ms");
        }
        return new LockerHealthIndicator(
                locker, properties.getHealth().getProbeKey(), timeout, statistics.getIfAvailable());
    }
}
