package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class UnfairRetryTargetTest {

    @Test
    void acquire_whileHeld_retriesUntilReleased() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (BenchTarget first = Targets.open("unfair:memory://unfair-retry");
                BenchTarget second = Targets.open("unfair:memory://unfair-retry")) {
            BenchTarget.Held held = first.acquire("k");
            Future<BenchTarget.Held> waiting = pool.submit(() -> second.acquire("k"));

            Thread.sleep(500); // a few retries: it must still be waiting, not holding the key with the first
            assertThat(waiting).isNotDone();

            held.release();
            waiting.get(10, TimeUnit.SECONDS).release();
        } finally {
            pool.shutdownNow();
        }
    }
}
