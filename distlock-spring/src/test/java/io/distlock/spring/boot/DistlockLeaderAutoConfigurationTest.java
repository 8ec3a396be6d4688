package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Leader;
import io.distlock.RemoteLocker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spring.DistlockLeaderInitiator;
import io.distlock.spring.ElectionContext;
import io.distlock.spring.RemoteLockRegistry;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The leader initiator's auto-configuration in Spring Boot's {@link ApplicationContextRunner}: on {@code memory:} (a
 * named space per test) for the properties and the back-off, on a real ZooKeeper server for two applications.
 */
class DistlockLeaderAutoConfigurationTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DistlockAutoConfiguration.class,
                    DistlockIntegrationAutoConfiguration.class,
                    DistlockLeaderAutoConfiguration.class))
            .withUserConfiguration(LeaderEvents.class);

    private final String memory = "distlock.uri=memory://boot-leader-" + UUID.randomUUID();

    /** Collects the leadership events published in the application context. */
    @Configuration(proxyBeanMethods = false)
    static class LeaderEvents {
        final Queue<AbstractLeaderEvent> events = new ConcurrentLinkedQueue<>();

        @Bean
        ApplicationListener<AbstractLeaderEvent> leaderEventCollector() {
            return events::add;
        }
    }

    private static Queue<AbstractLeaderEvent> events(AssertableApplicationContext context) {
        return context.getBean(LeaderEvents.class).events;
    }

    private static Leader awaitLeader(AssertableApplicationContext context) {
        DistlockLeaderInitiator initiator = context.getBean(DistlockLeaderInitiator.class);
        Deadlines.await(() -> initiator.getContext().isLeader(), WAIT, () -> "the application leads");
        return initiator.getElection().leader().orElseThrow();
    }

    @Test
    void withoutTheProperty_thereIsNoInitiator() {
        runner.withPropertyValues(memory).run(context -> {
            assertThat(context).hasSingleBean(RemoteLockRegistry.class);
            assertThat(context).doesNotHaveBean(DistlockLeaderInitiator.class);
        });
        runner.withPropertyValues(memory, "distlock.leader.election=false")
                .run(context -> assertThat(context).doesNotHaveBean(DistlockLeaderInitiator.class));
    }

    @Test
    void withTheProperty_theApplicationLeads_asTheLockersOwnerLabel_inTheDefaultRole_andHearsTheEvents() {
        runner.withPropertyValues(memory, "distlock.leader.election=true", "distlock.owner-label=billing-7")
                .run(context -> {
                    assertThat(context).hasSingleBean(DistlockLeaderInitiator.class);
                    assertThat(context).hasSingleBean(RemoteLockRegistry.class);
                    DistlockLeaderInitiator initiator = context.getBean(DistlockLeaderInitiator.class);
                    assertThat(initiator.isRunning())
                            .as("started with the context")
                            .isTrue();
                    Leader leader = awaitLeader(context);
                    assertThat(initiator.getElection().name()).isEqualTo("leader");
                    assertThat(leader.identity()).isEqualTo("billing-7");
                    Deadlines.await(() -> !events(context).isEmpty(), WAIT, () -> "the grant published");
                    AbstractLeaderEvent granted = events(context).peek();
                    assertThat(granted).isInstanceOf(OnGrantedEvent.class);
                    assertThat(granted.getRole()).isEqualTo("leader");
                    assertThat(((ElectionContext) granted.getContext()).epoch()).isEqualTo(leader.epoch());
                });
    }

    @Test
    void theRoleAndIdentityProperties_nameTheElectionAndTheLeader() {
        runner.withPropertyValues(
                        memory,
                        "distlock.leader.election=true",
                        "distlock.leader.role=scheduler",
                        "distlock.leader.identity=node-1:8080")
                .run(context -> {
                    Leader leader = awaitLeader(context);
                    assertThat(context.getBean(DistlockLeaderInitiator.class)
                                    .getElection()
                                    .name())
                            .isEqualTo("scheduler");
                    assertThat(leader.identity()).isEqualTo("node-1:8080");
                });
    }

    @Test
    void theApplicationsCandidate_isTold_andNamesTheRole() {
        Queue<String> told = new ConcurrentLinkedQueue<>();
        runner.withPropertyValues(memory, "distlock.leader.election=true")
                .withBean(Candidate.class, () -> new DefaultCandidate("ignored-id", "reports") {
                    @Override
                    public void onGranted(org.springframework.integration.leader.Context ctx) {
                        told.add("granted " + ((ElectionContext) ctx).epoch());
                    }
                })
                .run(context -> {
                    Leader leader = awaitLeader(context);
                    assertThat(context.getBean(DistlockLeaderInitiator.class)
                                    .getElection()
                                    .name())
                            .isEqualTo("reports");
                    assertThat(leader.identity())
                            .as("the locker's owner label, not the candidate's id")
                            .isEqualTo(context.getBean(RemoteLocker.class).ownerLabel());
                    Deadlines.await(() -> !told.isEmpty(), WAIT, () -> "the candidate told");
                    assertThat(told).containsExactly("granted " + leader.epoch());
                });
    }

    /** The application's own initiator. */
    @Configuration(proxyBeanMethods = false)
    static class OwnInitiator {
        @Bean
        DistlockLeaderInitiator mine(RemoteLocker locker) {
            return new DistlockLeaderInitiator(locker, new DefaultCandidate("mine", "own-role"));
        }
    }

    /** The application's own initiator of Spring Integration, on the auto-configured registry. */
    @Configuration(proxyBeanMethods = false)
    static class OwnRegistryInitiator {
        @Bean
        LockRegistryLeaderInitiator registryInitiator(LockRegistry<?> locks) {
            LockRegistryLeaderInitiator initiator =
                    new LockRegistryLeaderInitiator(locks, new DefaultCandidate("mine", "own-role"));
            initiator.setAutoStartup(false);
            return initiator;
        }
    }

    @Test
    void anInitiatorOfTheApplication_takesItsPlace() {
        runner.withPropertyValues(memory, "distlock.leader.election=true")
                .withUserConfiguration(OwnInitiator.class)
                .run(context -> {
                    assertThat(context).hasSingleBean(DistlockLeaderInitiator.class);
                    assertThat(context).hasBean("mine");
                    assertThat(awaitLeader(context).identity()).isEqualTo("mine");
                    assertThat(context.getBean(DistlockLeaderInitiator.class)
                                    .getElection()
                                    .name())
                            .isEqualTo("own-role");
                });
    }

    @Test
    void aLockRegistryLeaderInitiatorOfTheApplication_takesItsPlace() {
        runner.withPropertyValues(memory, "distlock.leader.election=true")
                .withUserConfiguration(OwnRegistryInitiator.class)
                .run(context -> {
                    assertThat(context).hasSingleBean(LockRegistryLeaderInitiator.class);
                    assertThat(context).doesNotHaveBean(DistlockLeaderInitiator.class);
                });
    }

    @Test
    void aBlankRole_failsStartup_namingTheProperty() {
        assertFailsNaming("distlock.leader.role= ", "distlock.leader.role");
    }

    @Test
    void aBlankIdentity_failsStartup_namingTheProperty() {
        assertFailsNaming("distlock.leader.identity= ", "distlock.leader.identity");
    }

    @Test
    void anIdentityTooLongForALabel_failsStartup_namingTheProperty() {
        assertFailsNaming("distlock.leader.identity=" + "x".repeat(200), "distlock.leader.identity");
    }

    private void assertFailsNaming(String property, String name) {
        runner.withPropertyValues(memory, "distlock.leader.election=true", property)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .isInstanceOfSatisfying(
                                InvalidConfigurationPropertyValueException.class,
                                e -> assertThat(e.getName()).isEqualTo(name))
                        .hasMessageContaining(name));
    }

    @Test
    void twoApplicationsOnOneStore_haveOneLeader_andClosingItsContextHandsLeadershipOn() {
        ApplicationContextRunner onZk = runner.withPropertyValues(
                "distlock.uri=zk://" + ZK.connectString() + "/boot-leader",
                "distlock.leader.election=true",
                "distlock.leader.role=two-applications");
        onZk.withPropertyValues("distlock.owner-label=first").run(first -> {
            Leader leader = awaitLeader(first);
            assertThat(leader.identity()).isEqualTo("first");
            onZk.withPropertyValues("distlock.owner-label=second").run(second -> {
                DistlockLeaderInitiator secondInitiator = second.getBean(DistlockLeaderInitiator.class);
                assertThat(Deadlines.holdsFor(
                                TestTimeouts.scaled(Duration.ofMillis(500)),
                                () -> !secondInitiator.getContext().isLeader()))
                        .as("the second waits while the first leads")
                        .isTrue();
                Queue<AbstractLeaderEvent> firstEvents = events(first);
                first.close();
                Leader next = awaitLeader(second);
                assertThat(next.identity()).isEqualTo("second");
                assertThat(next.epoch().getAsLong())
                        .isGreaterThan(leader.epoch().getAsLong());
                assertThat(firstEvents.stream().map(e -> e.getClass().getSimpleName()))
                        .containsExactly("OnGrantedEvent", "OnRevokedEvent");
            });
        });
    }
}
