package io.distlock.spring.boot;

import io.distlock.LockObserver;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import java.util.concurrent.Executor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;

/**
 * Opens a {@link RemoteLocker} from the {@code distlock.*} properties ({@link DistlockProperties}), closed with the
 * application context. Backs off if the application defines its own {@link RemoteLocker}.
 *
 * <p>The locker reports to the application's {@link LockObserver} bean if there is exactly one (e.g. {@code
 * distlock-micrometer}'s {@code MicrometerLockObserver}), and runs the lost-lock listeners on the {@link Executor} bean
 * named {@value #LISTENER_EXECUTOR} if there is one (by default, on a thread of the locker's own).
 */
@AutoConfiguration
@EnableConfigurationProperties(DistlockProperties.class)
public class DistlockAutoConfiguration {

    /** The name of the {@link Executor} bean the locker runs its lost-lock listeners on, if present. */
    public static final String LISTENER_EXECUTOR = "distlockListenerExecutor";

    /** Creates the auto-configuration (called by Spring). */
    public DistlockAutoConfiguration() {}

    /**
     * The counts of the auto-configured locker's locks, for the health indicator; declared before the locker, whose
     * absence it checks.
     */
    @Bean
    @ConditionalOnMissingBean(RemoteLocker.class)
    LockStatistics distlockLockStatistics() {
        return new LockStatistics();
    }

    /**
     * The locker, open on {@code distlock.uri}.
     *
     * @throws InvalidConfigurationPropertyValueException if {@code distlock.uri} is not set
     * @throws io.distlock.LockConfigurationException if the URI or an option is malformed or unknown
     * @throws io.distlock.LockBackendException if the store cannot be reached within the connect timeout
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RemoteLocker remoteLocker(
            DistlockProperties properties,
            LockStatistics statistics,
            ObjectProvider<LockObserver> observer,
            @Qualifier(LISTENER_EXECUTOR) ObjectProvider<Executor> listenerExecutor) {
        return builder(properties, statistics.around(observer.getIfUnique(LockObserver::none)), listenerExecutor)
                .build();
    }

    private static RemoteLockerBuilder builder(
            DistlockProperties properties, LockObserver observer, ObjectProvider<Executor> listenerExecutor) {
        String uri = properties.getUri();
        if (uri == null || uri.isBlank()) {
            throw new InvalidConfigurationPropertyValueException(
                    DistlockProperties.PREFIX + ".uri",
                    uri,
                    "distlock.uri must name the lock store, e.g. distlock.uri=zk://zk1:2181/locks (or etcd://,"
                            + " redis://, redlock://, cassandra://, memory:), with the backend's module on the class"
                            + " path");
        }
        RemoteLockerBuilder builder = RemoteLockers.builder().uri(uri).observer(observer);
        if (properties.getLeaseTime() != null) {
            builder.leaseTime(properties.getLeaseTime());
        }
        if (properties.getConnectTimeout() != null) {
            builder.connectTimeout(properties.getConnectTimeout());
        }
        if (properties.getOwnerLabel() != null) {
            try {
                builder.ownerLabel(properties.getOwnerLabel());
            } catch (IllegalArgumentException e) {
                throw new InvalidConfigurationPropertyValueException(
                        DistlockProperties.PREFIX + ".owner-label", properties.getOwnerLabel(), e.getMessage());
            }
        }
        if (properties.getLockDelay() != null) {
            try {
                builder.lockDelay(properties.getLockDelay());
            } catch (IllegalArgumentException e) {
                throw new InvalidConfigurationPropertyValueException(
                        DistlockProperties.PREFIX + ".lock-delay", properties.getLockDelay(), e.getMessage());
            }
        }
        properties.getOptions().forEach(builder::option);
        listenerExecutor.ifAvailable(builder::listenerExecutor);
        return builder;
    }
}
