package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class OwnerIdsTest {

    @Test
    void next_manyThreads_neverRepeatsAnId() throws Exception {
        int threads = 4;
        int perThread = 50_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<List<String>>> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                tasks.add(() -> {
                    List<String> ids = new ArrayList<>(perThread);
                    for (int i = 0; i < perThread; i++) {
                        ids.add(OwnerIds.next());
                    }
                    return ids;
                });
            }
            Set<String> all = new HashSet<>();
            for (Future<List<String>> ids : pool.invokeAll(tasks)) {
                all.addAll(ids.get());
            }
            assertThat(all).hasSize(threads * perThread);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void next_always_is32HexDigitsThenPidAndHost() {
        String id = OwnerIds.next();
        assertThat(id).matches("[0-9a-f]{32}\\." + ProcessHandle.current().pid() + "@[A-Za-z0-9._-]+");
    }
}
