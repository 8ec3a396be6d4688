package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Candidacy;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.LockBackendException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.spi.Deadline;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * How a candidate waits for its election's lock: one wait without a deadline (so it keeps its place in a fair queue),
 * and after a failed wait, asks spaced further and further apart.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class CandidateWaitTest {

    private static final LeadershipListener DEAF = LeadershipListener.of(term -> {}, (term, reason) -> {});

    private static RemoteLocker locker(TestInfo test, HookedProvider provider) {
        return RemoteLockers.builder()
                .uri("memory://candidates-" + test.getTestMethod().orElseThrow().getName())
                .provider(provider)
                .build();
    }

    /** A wait that ended after an hour and was asked for again went to the back of a fair queue. */
    @Test
    void aCandidate_waitsForTheLockWithoutADeadline(TestInfo test) throws Exception {
        HookedProvider provider = new HookedProvider();
        AtomicReference<Deadline> asked = new AtomicReference<>();
        try (RemoteLocker locker = locker(test, provider)) {
            LeaderElection election = locker.election("e");
            try (RemoteLock held = locker.lock(election.key())) { // the holder's own wait is not the candidate's
                provider.beforeAcquire = (request, deadline) -> {
                    if (request.key().equals(election.key())) {
                        asked.set(deadline);
                    }
                };
                Candidacy waiting = election.join("waiter", DEAF);
                Waits.until(
                        "the candidate's wait reached the backend", Duration.ofSeconds(10), () -> asked.get() != null);

                assertThat(asked.get().isBounded())
                        .as("the wait's deadline: %s", asked.get())
                        .isFalse();
                assertThat(waiting.isLeader()).isFalse();
                waiting.close();
            }
        }
    }

    /** Waits that fail are asked again after 1 s, then 2 s: not every second for as long as the store is down. */
    @Test
    void waitsThatFail_areAskedAgain_fartherAndFartherApart_untilOneIsGranted(TestInfo test) throws Exception {
        HookedProvider provider = new HookedProvider();
        List<Long> asks = new CopyOnWriteArrayList<>();
        AtomicInteger failuresLeft = new AtomicInteger(2);
        try (RemoteLocker locker = locker(test, provider)) {
            LeaderElection election = locker.election("e");
            provider.beforeAcquire = (request, deadline) -> {
                if (request.key().equals(election.key())) {
                    asks.add(System.nanoTime());
                    if (failuresLeft.getAndDecrement() > 0) {
                        throw new LockBackendException("the store is down (a test's failure)");
                    }
                }
            };
            try (Candidacy candidacy = election.join("c", DEAF)) {
                assertThat(candidacy.awaitLeadership(Duration.ofSeconds(30)))
                        .as("elected once the store answers")
                        .isTrue();
            }
        }

        assertThat(asks).as("asks: two failed, the third granted").hasSize(3);
        long first = asks.get(1) - asks.get(0);
        long second = asks.get(2) - asks.get(1);
        assertThat(Duration.ofNanos(first))
                .as("pause after the first failure")
                .isGreaterThanOrEqualTo(DefaultCandidacy.FIRST_RETRY);
        assertThat(Duration.ofNanos(second))
                .as("pause after the second failure")
                .isGreaterThanOrEqualTo(DefaultCandidacy.FIRST_RETRY.multipliedBy(2));
    }
}
