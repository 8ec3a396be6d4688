package io.distlock.spring.boot;

import io.distlock.RemoteLocker;
import io.distlock.spring.RemoteLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A {@link RemoteLockRegistry} on the application's {@link RemoteLocker} when Spring Integration is on the class path
 * and the application defines no {@link LockRegistry} of its own.
 */
@AutoConfiguration(after = DistlockAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnSingleCandidate(RemoteLocker.class)
public class DistlockIntegrationAutoConfiguration {

    /** Creates the auto-configuration (called by Spring). */
    public DistlockIntegrationAutoConfiguration() {}

    /** The registry, on the locker. */
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    public RemoteLockRegistry remoteLockRegistry(RemoteLocker locker) {
        return new RemoteLockRegistry(locker);
    }
}
