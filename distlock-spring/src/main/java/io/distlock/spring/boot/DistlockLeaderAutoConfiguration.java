package io.distlock.spring.boot;

import io.distlock.LeaderElection;
import io.distlock.RemoteLocker;
import io.distlock.spring.DistlockLeaderInitiator;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * A {@link DistlockLeaderInitiator} on the application's {@link RemoteLocker} when {@code distlock.leader.election=true}
 * and Spring Integration is on the class path: it joins the election named {@code distlock.leader.role} as {@code
 * distlock.leader.identity} with the application's {@link Candidate} bean (if it has exactly one; else a {@link
 * DefaultCandidate}), and publishes Spring Integration's {@code OnGrantedEvent} and {@code OnRevokedEvent}. Backs off
 * if the application defines its own {@link DistlockLeaderInitiator} or {@link LockRegistryLeaderInitiator}.
 */
@AutoConfiguration(after = {DistlockAutoConfiguration.class, DistlockIntegrationAutoConfiguration.class})
@ConditionalOnClass(LockRegistryLeaderInitiator.class)
@ConditionalOnBooleanProperty(DistlockLeaderAutoConfiguration.ENABLED)
@ConditionalOnSingleCandidate(RemoteLocker.class)
@EnableConfigurationProperties(DistlockProperties.class)
public class DistlockLeaderAutoConfiguration {

    /** The property that asks for the leader initiator. */
    public static final String ENABLED = DistlockProperties.PREFIX + ".leader.election";

    private static final String ROLE = DistlockProperties.PREFIX + ".leader.role";
    private static final String IDENTITY = DistlockProperties.PREFIX + ".leader.identity";

    /** Creates the auto-configuration (called by Spring). */
    public DistlockLeaderAutoConfiguration() {}

    /**
     * The initiator, started with the context in Spring's initiators' phase.
     *
     * @throws InvalidConfigurationPropertyValueException if {@code distlock.leader.role} or {@code
     *     distlock.leader.identity} is blank or not valid as an election name or an owner label
     */
    @Bean
    @ConditionalOnMissingBean({DistlockLeaderInitiator.class, LockRegistryLeaderInitiator.class})
    public DistlockLeaderInitiator distlockLeaderInitiator(
            RemoteLocker locker, DistlockProperties properties, ObjectProvider<Candidate> candidates) {
        DistlockProperties.Leader leader = properties.getLeader();
        Candidate given = candidates.getIfUnique();
        String role = leader.getRole() != null
                ? leader.getRole()
                : given != null ? given.getRole() : DistlockProperties.Leader.DEFAULT_ROLE;
        String identity = leader.getIdentity() != null ? leader.getIdentity() : locker.ownerLabel();
        LeaderElection election;
        try {
            election = locker.election(role);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException(ROLE, role, e.getMessage());
        }
        Candidate candidate = given != null ? given : new DefaultCandidate(identity, role);
        try {
            return new DistlockLeaderInitiator(election, candidate, identity);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException(IDENTITY, identity, e.getMessage());
        }
    }
}
