package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.junit.jupiter.api.Test;

/**
 * The queue's order is Curator's, so that a distlock locker and Curator's {@code InterProcessMutex} on one path agree
 * on who is first ({@code CuratorInteropTest} checks them against a server; this checks the order itself, on names a
 * server does not make: without {@code lock-}, with it twice, sequences of other lengths).
 */
class QueueOrderTest {

    private static final Comparator<String> CURATOR = Comparator.comparing(
            (String name) -> StandardLockInternalsDriver.standardFixForSorting(name, ZkCalls.LOCK_NAME));

    @Test
    void bySequence_ordersEveryListAsCuratorDoes() {
        Random random = new Random(42);
        for (int round = 0; round < 2000; round++) {
            List<String> names = new ArrayList<>();
            for (int i = 0, n = 1 + random.nextInt(12); i < n; i++) {
                names.add(name(random));
            }
            List<String> ours = new ArrayList<>(names);
            ours.sort(ZkAcquisition.BY_SEQUENCE);
            List<String> curators = new ArrayList<>(names);
            curators.sort(CURATOR);

            assertThat(ours).as("sorted %s", names).isEqualTo(curators);
        }
    }

    @Test
    void bySequence_theSequenceDecides_notTheProtectionId() {
        List<String> queue = new ArrayList<>(List.of(
                "_c_ffffffff-0000-4000-8000-000000000000-lock-0000000002",
                "_c_00000000-0000-4000-8000-000000000000-lock-0000000003",
                "_c_88888888-0000-4000-8000-000000000000-lock-0000000001"));

        queue.sort(ZkAcquisition.BY_SEQUENCE);

        assertThat(queue).extracting(n -> n.substring(n.length() - 1)).containsExactly("1", "2", "3");
    }

    /** A node name as a server makes it, or one it would not: no {@code lock-}, two, a shorter or empty sequence. */
    private static String name(Random random) {
        String id = "_c_" + Long.toHexString(random.nextLong()) + "-";
        String sequence = String.format("%010d", random.nextInt(50));
        return switch (random.nextInt(6)) {
            case 0 -> id + "other-" + sequence;
            case 1 -> id + "lock-x-lock-" + sequence;
            case 2 -> id + ZkCalls.LOCK_NAME + random.nextInt(50);
            case 3 -> id + ZkCalls.LOCK_NAME;
            default -> id + ZkCalls.LOCK_NAME + sequence;
        };
    }
}
