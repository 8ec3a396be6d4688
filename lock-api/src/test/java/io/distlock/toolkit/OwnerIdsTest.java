package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
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

    @Test
    void label_ofAnIdWithTheDefaultLabel_isPidAtHost() {
        assertThat(OwnerIds.label(OwnerIds.next())).contains(OwnerIds.defaultLabel());
        assertThat(OwnerIds.defaultLabel()).startsWith(ProcessHandle.current().pid() + "@");
    }

    @Test
    void next_withALabelOfPlainCharacters_carriesItAsItIs() {
        String id = OwnerIds.next("billing-7.eu:8080@pod_3+x~y");
        assertThat(id).endsWith(".billing-7.eu:8080@pod_3+x~y");
        assertThat(OwnerIds.label(id)).contains("billing-7.eu:8080@pod_3+x~y");
    }

    @Test
    void next_withALabelOfOtherCharacters_encodesThemAndLabelDecodesThem() {
        String label = "http://scheduler-2/api?x=1#f | über 100% ✓";
        String id = OwnerIds.next(label);
        assertThat(id.substring(33)).matches("[A-Za-z0-9._~:@+%-]+");
        assertThat(OwnerIds.label(id)).contains(label);
    }

    @Test
    void label_ofAValueAnotherToolWrote_isEmpty() {
        assertThat(OwnerIds.label("")).isEmpty();
        assertThat(OwnerIds.label("etcdctl-lock-holder")).isEmpty();
        assertThat(OwnerIds.label("zz2a0000000000000000000000000000.host")).isEmpty();
        assertThat(OwnerIds.label("0123456789abcdef0123456789abcdef")).isEmpty();
        assertThat(OwnerIds.label("0123456789abcdef0123456789abcdef.bad%4")).isEmpty();
        assertThat(OwnerIds.label("0123456789abcdef0123456789abcdef.bad%zz")).isEmpty();
        assertThat(OwnerIds.label("0123456789abcdef0123456789abcdef.ok%41")).isEqualTo(Optional.of("okA"));
    }

    @Test
    void checkLabel_refusesNullBlankHugeAndControlCharacters() {
        assertThatThrownBy(() -> OwnerIds.checkLabel(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("ownerLabel");
        assertThatThrownBy(() -> OwnerIds.checkLabel(" \t"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
        assertThatThrownBy(() -> OwnerIds.checkLabel("x".repeat(OwnerIds.MAX_LABEL_BYTES + 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("129 bytes");
        assertThatThrownBy(() -> OwnerIds.checkLabel("two\nlines"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("U+000a at 3");
        assertThat(OwnerIds.checkLabel("é".repeat(OwnerIds.MAX_LABEL_BYTES / 2)))
                .hasSize(64);
    }
}
