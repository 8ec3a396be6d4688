package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The wait loop shared by the polling backends, driven step by step: the test answers each attempt, withdrawal and
 * release by hand, so every interleaving below happens in the order written, on any machine.
 */
class PollingAcquisitionTest {

    private static final long AN_HOUR = TimeUnit.HOURS.toNanos(1);
    private static final Duration OUTAGE_LIMIT = Duration.ofSeconds(2);

    private final ManualTicker ticker = new ManualTicker();
    private final RecordingTimers timers = new RecordingTimers();
    private final WakeUps wakeUps = new WakeUps();

    @AfterEach
    void stopTimers() {
        timers.shutdownNow();
    }

    @Test
    void aReleaseOfItsKey_cutsTheWaitShort_andOneOfAnotherKeyDoesNot() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        wakeUps.wake("other");
        assertThat(waiting.attemptsNow()).isZero();

        wakeUps.wake("k");
        waiting.nextAttempt().complete(PollingAcquisition.Step.granted(new TestLease()));
        assertThat(waiting.result().get(5, TimeUnit.SECONDS)).isPresent();
    }

    @Test
    void aReleaseWhileAnAttemptIsInFlight_isNotMissed() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        CompletableFuture<PollingAcquisition.Step<TestLease>> first = waiting.nextAttempt();

        wakeUps.wake("k"); // the holder released after our attempt read the store, before it answered
        first.complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        assertThat(waiting.nextAttempt())
                .as("attempted again at once, not in an hour")
                .isNotNull();
    }

    @Test
    void backingOff_isDeafToReleases() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.backOff(AN_HOUR));

        wakeUps.wake("k");

        assertThat(waiting.attemptsNow()).isZero();
        assertThat(waiting.result()).isNotDone();
    }

    @Test
    void theTimer_attemptsAgain() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(TimeUnit.MILLISECONDS.toNanos(10)));

        waiting.nextAttempt().complete(PollingAcquisition.Step.granted(new TestLease()));

        assertThat(waiting.result().get(5, TimeUnit.SECONDS)).isPresent();
        assertThat(wakeUps.keysWaitedOn()).as("unregistered").isZero();
    }

    @Test
    void pastTheDeadline_itWithdrawsBeforeAnsweringEmpty() throws Exception {
        Scripted waiting = start(Deadline.after(Duration.ofSeconds(1), ticker));
        ticker.advance(Duration.ofSeconds(2));

        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        waitUntil(() -> waiting.withdrawals.get() == 1);
        assertThat(waiting.result()).as("not before the store is clean").isNotDone();
        waiting.withdrawn.complete(null);
        assertThat(waiting.result().get(5, TimeUnit.SECONDS)).isEmpty();
        assertThat(waiting.settled()).isDone();
        assertThat(wakeUps.keysWaitedOn()).isZero();
    }

    @Test
    void pastTheDeadline_afterAStoreFailure_endsWithThatFailure() throws Exception {
        Scripted waiting = start(Deadline.after(Duration.ofSeconds(1), ticker));
        ticker.advance(Duration.ofSeconds(2));
        waiting.withdrawn.complete(null);

        waiting.nextAttempt().complete(PollingAcquisition.Step.storeFailed(new LockBackendException("store down")));

        assertThatThrownBy(() -> waiting.result().get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(LockBackendException.class)
                .hasRootCauseMessage("store down");
    }

    @Test
    void aStoreFailingForTheOutageLimit_endsAWaitWithoutDeadline_withItsFailure() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.withdrawn.complete(null);

        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeFailed(new LockBackendException("down 1")));
        ticker.advance(OUTAGE_LIMIT.minusMillis(1));
        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeFailed(new LockBackendException("down 2")));
        assertThat(waiting.result()).as("still within the outage limit").isNotDone();
        ticker.advance(Duration.ofMillis(1));
        waiting.nextAttempt().complete(PollingAcquisition.Step.storeFailed(new LockBackendException("down 3")));

        assertThatThrownBy(() -> waiting.result().get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(LockBackendException.class)
                .hasRootCauseMessage("down 3");
        assertThat(waiting.withdrawals.get()).isEqualTo(1);
    }

    @Test
    void theOutageLimit_countsFromTheFirstFailureInARow_anAnswerStartsItAgain() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));

        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeFailed(new LockBackendException("down")));
        ticker.advance(OUTAGE_LIMIT.minusMillis(1));
        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.backOff(1)); // the store answered: a split vote
        ticker.advance(Duration.ofMillis(1));
        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeFailed(new LockBackendException("again")));

        assertThat(waiting.result())
                .as("a new outage, not the end of the old one")
                .isNotDone();
        assertThat(waiting.nextAttempt()).isNotNull();
    }

    @Test
    void aStoreThatAnswersWithStalls_isNoOutage_theWaitGoesOnToItsDeadline_andEndsWithTheFailure() throws Exception {
        Scripted waiting = start(Deadline.after(OUTAGE_LIMIT.multipliedBy(3), ticker));
        waiting.withdrawn.complete(null);

        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeFailed(new LockBackendException("down")));
        ticker.advance(OUTAGE_LIMIT.minusMillis(1));
        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeStalled(new LockBackendException("slow 1")));
        ticker.advance(OUTAGE_LIMIT.multipliedBy(2));
        answerAndAwaitTheNextPoll(waiting, PollingAcquisition.Step.storeStalled(new LockBackendException("slow 2")));
        assertThat(waiting.result())
                .as("reached, and within the deadline: waits on")
                .isNotDone();
        ticker.advance(OUTAGE_LIMIT);
        waiting.nextAttempt().complete(PollingAcquisition.Step.storeStalled(new LockBackendException("slow 3")));

        assertThatThrownBy(() -> waiting.result().get(5, TimeUnit.SECONDS))
                .as("past the deadline: the store's failure, not a timeout")
                .hasCauseInstanceOf(LockBackendException.class)
                .hasRootCauseMessage("slow 3");
    }

    @Test
    void storeFailuresInARow_backOffExponentially_withJitter_upToASecond() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));

        for (int i = 0; i < 12; i++) {
            waiting.nextAttempt().complete(PollingAcquisition.Step.storeFailed(new LockBackendException("down")));
        }
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(TimeUnit.MILLISECONDS.toNanos(7)));
        waiting.nextAttempt().complete(PollingAcquisition.Step.storeFailed(new LockBackendException("down")));
        waiting.nextAttempt();

        List<Long> delays = timers.delaysMillis();
        assertThat(delays).hasSize(14);
        for (int i = 0; i < 12; i++) {
            long ceiling = Math.min(5L << i, 1000);
            assertThat(delays.get(i)).as("back-off %d", i + 1).isBetween(ceiling / 2, ceiling);
        }
        assertThat(delays.get(12)).as("the poll the backend asked for").isEqualTo(7);
        assertThat(delays.get(13)).as("an answer resets the back-off").isBetween(2L, 5L);
    }

    @Test
    void aWaiterWokenAgainAndAgain_keepsOnePollTimer_whichStillPolls() throws Exception {
        timers.keepDelays();
        long poll = TimeUnit.MILLISECONDS.toNanos(1500);
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(poll));

        for (int i = 0; i < 3; i++) {
            wakeUps.wake("k");
            waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(poll));
        }
        assertThat(timers.delaysMillis())
                .as("one timer for the four polls: the wake-ups left it running, the polls took it over")
                .hasSize(1);

        // no wake-up from here on: the attempt below is the kept timer's
        waiting.nextAttempt().complete(PollingAcquisition.Step.granted(new TestLease()));
        assertThat(waiting.result().get(5, TimeUnit.SECONDS)).isPresent();
        assertThat(timers.delaysMillis()).hasSize(1);
    }

    @Test
    void aPollTimerLeftRunning_thatFiresWhileAnAttemptIsInFlight_sendsNoSecondAttempt() throws Exception {
        timers.keepDelays();
        long poll = TimeUnit.MILLISECONDS.toNanos(20);
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(poll));

        wakeUps.wake("k");
        CompletableFuture<PollingAcquisition.Step<TestLease>> inFlight = waiting.nextAttempt();
        waitUntil(() -> timers.scheduled().get(0).isDone());
        Thread.sleep(50);
        assertThat(waiting.attemptsNow())
                .as("the timer fired into an attempt in flight")
                .isZero();

        inFlight.complete(PollingAcquisition.Step.pollAfter(AN_HOUR));
        assertThat(timers.delaysMillis()).as("a fired timer is not taken over").hasSize(2);
        wakeUps.wake("k");
        waiting.nextAttempt().complete(PollingAcquisition.Step.granted(new TestLease()));
        assertThat(waiting.result().get(5, TimeUnit.SECONDS)).isPresent();
    }

    @Test
    void aPollTimerLeftRunning_isNotTakenOver_byABackOff_orByAPollThatMustComeSooner() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        wakeUps.wake("k");
        waiting.nextAttempt().complete(PollingAcquisition.Step.backOff(AN_HOUR));
        assertThat(timers.scheduled()).hasSize(2);
        assertThat(timers.scheduled().get(0).isCancelled())
                .as("the poll timer, replaced by the back-off's")
                .isTrue();

        Scripted other = start(Deadline.unbounded(ticker));
        other.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));
        wakeUps.wakeOne("k"); // the first is backing off: deaf, so this one is woken
        other.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR / 4));
        assertThat(timers.delaysMillis())
                .as("an hour left on the old timer, a quarter of one asked for: a new timer")
                .hasSize(4);
        assertThat(timers.scheduled().get(2).isCancelled()).isTrue();
    }

    @Test
    void wakeOne_wakesTheLongestWaitingListener_andSkipsOneBackingOff() throws Exception {
        Scripted first = start(Deadline.unbounded(ticker));
        Scripted second = start(Deadline.unbounded(ticker));
        Scripted third = start(Deadline.unbounded(ticker));
        first.nextAttempt().complete(PollingAcquisition.Step.backOff(AN_HOUR));
        second.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));
        third.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        assertThat(wakeUps.wakeOne("k")).isTrue();

        assertThat(first.attemptsNow()).as("backing off: deaf").isZero();
        assertThat(second.nextAttempt()).as("the longest-waiting listener").isNotNull();
        assertThat(third.attemptsNow()).as("not woken: keeps its own poll").isZero();
    }

    @Test
    void aFailedAttempt_endsWithItsFailure_afterWithdrawing() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));

        waiting.nextAttempt().completeExceptionally(new IllegalStateException("bug in the step"));

        waitUntil(() -> waiting.withdrawals.get() == 1);
        assertThat(waiting.result()).isNotDone();
        waiting.withdrawn.complete(null);
        assertThatThrownBy(() -> waiting.result().get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasRootCauseMessage("bug in the step");
    }

    @Test
    void cancelledWhileWaiting_withdrawsAtOnce() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        waiting.result().cancel(false);

        assertThat(waiting.withdrawals.get()).isEqualTo(1);
        assertThat(waiting.settled()).isNotDone();
        waiting.withdrawn.complete(null);
        assertThat(waiting.settled()).isDone();
        wakeUps.wake("k");
        assertThat(waiting.attemptsNow()).as("no attempt after the cancel").isZero();
    }

    @Test
    void cancelledWhileAnAttemptIsInFlight_releasesTheGrantItBrings() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        CompletableFuture<PollingAcquisition.Step<TestLease>> inFlight = waiting.nextAttempt();

        waiting.result().cancel(false);
        assertThat(waiting.withdrawals.get())
                .as("the attempt in flight cleans up when it answers")
                .isZero();
        TestLease late = new TestLease();
        inFlight.complete(PollingAcquisition.Step.granted(late));

        assertThat(waiting.released).containsExactly(late);
        assertThat(waiting.settled()).isDone();
    }

    @Test
    void cancelledWhileAnAttemptIsInFlight_withdrawsWhenItAnswersWithoutAGrant() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        CompletableFuture<PollingAcquisition.Step<TestLease>> inFlight = waiting.nextAttempt();

        waiting.result().cancel(false);
        inFlight.complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        assertThat(waiting.withdrawals.get()).isEqualTo(1);
        assertThat(waiting.released).isEmpty();
    }

    @Test
    void aGrant_isHandedOverOnTheCompletionExecutor() throws Exception {
        BlockingQueue<Runnable> handOvers = new LinkedBlockingQueue<>();
        Scripted waiting = start(Deadline.unbounded(ticker), handOvers::add);

        waiting.nextAttempt().complete(PollingAcquisition.Step.granted(new TestLease()));

        assertThat(waiting.result())
                .as("not completed on the thread that answered")
                .isNotDone();
        assertThat(handOvers).hasSize(1);
        handOvers.take().run();
        assertThat(waiting.result().getNow(null)).isPresent();
    }

    @Test
    void aClosedBackend_endsTheWaitWithAnExceptionSayingSo() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.withdrawn.complete(null);
        timers.shutdownNow();

        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));

        assertThatThrownBy(() -> waiting.result().get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(LockBackendException.class)
                .hasMessageContaining("lock 'k'")
                .hasMessageContaining("the backend was closed");
    }

    @Test
    void await_interrupted_withdrawsBeforeThrowing() throws Exception {
        Scripted waiting = start(Deadline.unbounded(ticker));
        waiting.nextAttempt().complete(PollingAcquisition.Step.pollAfter(AN_HOUR));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicInteger withdrawalsWhenThrown = new AtomicInteger(-1);
        CountDownLatch done = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                waiting.await(Duration.ofSeconds(5));
            } catch (Throwable e) {
                withdrawalsWhenThrown.set(waiting.settled().isDone() ? waiting.withdrawals.get() : -2);
                thrown.set(e);
            } finally {
                done.countDown();
            }
        });
        waiter.start();
        waitUntil(() -> waiter.getState() == Thread.State.WAITING);

        waiter.interrupt();
        waitUntil(() -> waiting.withdrawals.get() == 1);
        assertThat(done.getCount())
                .as("still waiting for the store to be clean")
                .isEqualTo(1);
        waiting.withdrawn.complete(null);

        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(withdrawalsWhenThrown.get()).isEqualTo(1);
    }

    private Scripted start(Deadline deadline) {
        return start(deadline, Runnable::run);
    }

    private Scripted start(Deadline deadline, Executor completion) {
        Scripted scripted = new Scripted(deadline, completion);
        scripted.start();
        return scripted;
    }

    /**
     * Answers the next attempt and waits until the acquisition has set its next poll: an attempt sent by the timer
     * thread may be answered before its callback is registered, which then runs on that thread, later.
     */
    private void answerAndAwaitTheNextPoll(Scripted waiting, PollingAcquisition.Step<TestLease> answer)
            throws InterruptedException {
        int polls = timers.delaysMillis().size();
        waiting.nextAttempt().complete(answer);
        waitUntil(() -> timers.delaysMillis().size() > polls);
    }

    private static void waitUntil(BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end).as("waited 5 s for a condition").isNegative();
            Thread.sleep(1);
        }
    }

    /** An acquisition whose attempts, withdrawal and releases the test answers by hand. */
    private final class Scripted extends PollingAcquisition<TestLease> {
        private final BlockingQueue<CompletableFuture<Step<TestLease>>> attempts = new LinkedBlockingQueue<>();
        private final CompletableFuture<Void> withdrawn = new CompletableFuture<>();
        private final AtomicInteger withdrawals = new AtomicInteger();
        private final List<TestLease> released = new CopyOnWriteArrayList<>();

        Scripted(Deadline deadline, Executor completion) {
            super("k", deadline, OUTAGE_LIMIT, timers, wakeUps, "k", completion);
        }

        @Override
        protected CompletionStage<Step<TestLease>> attempt() {
            CompletableFuture<Step<TestLease>> answer = new CompletableFuture<>();
            attempts.add(answer);
            return answer;
        }

        @Override
        protected CompletionStage<?> withdraw() {
            withdrawals.incrementAndGet();
            return withdrawn;
        }

        @Override
        protected CompletionStage<?> release(TestLease lease) {
            released.add(lease);
            return CompletableFuture.completedFuture(null);
        }

        /** The next attempt sent; fails the test if none comes within 5 s. */
        CompletableFuture<Step<TestLease>> nextAttempt() throws InterruptedException {
            CompletableFuture<Step<TestLease>> next = attempts.poll(5, TimeUnit.SECONDS);
            assertThat(next).as("an attempt").isNotNull();
            return next;
        }

        /** Attempts sent and not yet taken by {@link #nextAttempt}. */
        int attemptsNow() {
            return attempts.size();
        }
    }

    /**
     * Timers that record the delay each poll asked for and fire at once, except the hour-long ones (a waiter that
     * must wait for a wake-up), which fire in an hour; or, once {@link #keepDelays} is set, each when asked.
     */
    private static final class RecordingTimers extends ScheduledThreadPoolExecutor {
        private final List<Long> delaysMillis = new CopyOnWriteArrayList<>();
        private final List<ScheduledFuture<?>> scheduled = new CopyOnWriteArrayList<>();
        private volatile boolean keepDelays;

        RecordingTimers() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            delaysMillis.add(unit.toMillis(delay));
            ScheduledFuture<?> timer =
                    super.schedule(command, keepDelays || unit.toNanos(delay) >= AN_HOUR ? delay : 0, unit);
            scheduled.add(timer);
            return timer;
        }

        /** From now on, every timer fires after the delay it asked for. */
        void keepDelays() {
            keepDelays = true;
        }

        List<Long> delaysMillis() {
            return List.copyOf(delaysMillis);
        }

        List<ScheduledFuture<?>> scheduled() {
            return List.copyOf(scheduled);
        }
    }

    private static final class TestLease implements Lease {
        @Override
        public String key() {
            return "k";
        }

        @Override
        public String ownerId() {
            return "owner";
        }

        @Override
        public OptionalLong fencingToken() {
            return OptionalLong.empty();
        }

        @Override
        public long validUntilNanos() {
            return Long.MAX_VALUE;
        }
    }
}
