package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DeferredBatchesTest {

    private static final Duration DELAY = Duration.ofMillis(50);

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void shutDown() {
        timer.shutdownNow();
    }

    /**
     * A lock granted hundreds of times a second added an item every few milliseconds: a pass set by the adding thread
     * at each batch woke the timer thread for nothing. While items keep coming, the passes set each other.
     */
    @Test
    void add_whileItemsKeepComing_theAddingThreadSetsOnePass_andEveryItemIsDone() throws Exception {
        List<Integer> done = new CopyOnWriteArrayList<>();
        DeferredBatches<Integer> batches = new DeferredBatches<>(timer, DELAY, done::add);
        long start = System.nanoTime();
        int added = 0;
        while (System.nanoTime() - start < DELAY.multipliedBy(10).toNanos()) {
            batches.add(added++);
            Thread.sleep(1);
        }
        long batchesSpanned = (System.nanoTime() - start) / DELAY.toNanos();

        int all = added;
        awaitDone(done, all);
        assertThat(done).hasSize(all).doesNotHaveDuplicates();
        // Every pass found items (one comes each millisecond), so each set the next: the adder set the first only. A
        // stall of the adding thread longer than a batch (a loaded machine) lets a pass find nothing and the next item
        // set one; far fewer than one per batch.
        assertThat(batches.passesSetByAdders())
                .as("passes set by the adding thread over %d batches", batchesSpanned)
                .isLessThanOrEqualTo(Math.max(2, batchesSpanned / 4));
    }

    @Test
    void add_afterAQuietBatch_setsAPassAgain_andTheItemIsDone() throws Exception {
        List<String> done = new CopyOnWriteArrayList<>();
        DeferredBatches<String> batches = new DeferredBatches<>(timer, DELAY, done::add);
        batches.add("first");
        awaitDone(done, 1);
        // The pass that found "first" set one more; that one finds nothing and sets none.
        long quiet = System.nanoTime() + DELAY.multipliedBy(4).toNanos();
        while (System.nanoTime() < quiet) {
            Thread.sleep(10);
        }
        long passes = batches.passesSet();
        Thread.sleep(DELAY.multipliedBy(3).toMillis());
        assertThat(batches.passesSet()).as("passes set with nothing added").isEqualTo(passes);

        batches.add("second");
        awaitDone(done, 2);
        assertThat(done).containsExactly("first", "second");
        assertThat(batches.passesSetByAdders()).isEqualTo(2);
    }

    @Test
    void action_throwing_doesNotStopTheOtherItems() throws Exception {
        List<String> done = new CopyOnWriteArrayList<>();
        DeferredBatches<String> batches = new DeferredBatches<>(timer, DELAY, item -> {
            if (item.equals("bad")) {
                throw new IllegalStateException("bad item");
            }
            done.add(item);
        });
        batches.add("a");
        batches.add("bad");
        batches.add("b");
        awaitDone(done, 2);
        assertThat(done).containsExactly("a", "b");
    }

    @Test
    void add_afterTheSchedulerIsShutDown_dropsTheItem_withoutThrowing() {
        DeferredBatches<String> batches = new DeferredBatches<>(timer, DELAY, item -> {});
        timer.shutdown();
        batches.add("late");
        assertThat(batches.passesSet()).isZero();
    }

    @Test
    void constructor_rejectsANonPositiveDelay() {
        assertThatThrownBy(() -> new DeferredBatches<String>(timer, Duration.ZERO, item -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay must be positive");
    }

    private static void awaitDone(List<?> done, int count) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (done.size() < count) {
            assertThat(System.nanoTime())
                    .as("%d of %d items done", done.size(), count)
                    .isLessThan(end);
            Thread.sleep(5);
        }
    }
}
