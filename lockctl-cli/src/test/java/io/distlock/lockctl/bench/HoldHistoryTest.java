package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine's check of a run's history against the workload's rule, on histories written by hand. */
class HoldHistoryTest {

    private static HoldHistory.Hold hold(long grant, long release, int process, LockKind kind) {
        return new HoldHistory.Hold(grant, release, process, 0, 0, kind);
    }

    @Test
    void concurrentReads_areNotAViolation() {
        HoldHistory h = HoldHistory.check(
                List.of(
                        hold(0, 10, 0, LockKind.READ),
                        hold(1, 11, 1, LockKind.READ),
                        hold(2, 12, 2, LockKind.READ),
                        hold(12, 20, 3, LockKind.WRITE)),
                Workload.readHeavy(0.9),
                0);

        assertThat(h.violations()).isZero();
        assertThat(h.mostHeldAtOnce()).isEqualTo(3);
    }

    @Test
    void aWriteOverlappingAReadOrAWrite_isAViolation() {
        HoldHistory beside = HoldHistory.check(
                List.of(hold(0, 10, 0, LockKind.READ), hold(5, 15, 1, LockKind.WRITE)), Workload.readHeavy(0.9), 0);
        HoldHistory readInsideWrite = HoldHistory.check(
                List.of(hold(0, 10, 0, LockKind.WRITE), hold(5, 8, 1, LockKind.READ)), Workload.readHeavy(0.9), 0);
        HoldHistory twoWrites = HoldHistory.check(
                List.of(hold(0, 10, 0, LockKind.WRITE), hold(9, 12, 1, LockKind.WRITE)), Workload.readHeavy(0.9), 0);

        assertThat(beside.violations()).isEqualTo(1);
        assertThat(beside.firstViolation()).contains("a write of key 0").contains("process 1");
        assertThat(readInsideWrite.violations()).isEqualTo(1);
        assertThat(readInsideWrite.firstViolation()).contains("a read");
        assertThat(twoWrites.violations()).isEqualTo(1);
    }

    @Test
    void permitsUpToTheirNumber_areNotAViolation_oneMoreIs() {
        List<HoldHistory.Hold> three = List.of(
                hold(0, 10, 0, LockKind.PERMIT), hold(1, 10, 1, LockKind.PERMIT), hold(2, 10, 2, LockKind.PERMIT));

        assertThat(HoldHistory.check(three, Workload.semaphore(3), 0).violations())
                .isZero();
        HoldHistory overGranted = HoldHistory.check(three, Workload.semaphore(2), 0);
        assertThat(overGranted.violations()).isEqualTo(1);
        assertThat(overGranted.firstViolation()).contains("at most 2 at once");
        assertThat(overGranted.mostHeldAtOnce()).isEqualTo(3);
    }

    @Test
    void locks_overlapping_isAViolation_handedOnAtOneInstant_isNot() {
        assertThat(HoldHistory.check(
                                List.of(hold(0, 10, 0, LockKind.LOCK), hold(10, 20, 1, LockKind.LOCK)),
                                Workload.LOCK,
                                0)
                        .violations())
                .isZero();
        assertThat(HoldHistory.check(
                                List.of(hold(0, 10, 0, LockKind.LOCK), hold(9, 20, 1, LockKind.LOCK)), Workload.LOCK, 0)
                        .violations())
                .isEqualTo(1);
    }

    @Test
    void keysAreCheckedApart() {
        HoldHistory h = HoldHistory.check(
                List.of(
                        new HoldHistory.Hold(0, 10, 0, 0, 0, LockKind.WRITE),
                        new HoldHistory.Hold(0, 10, 1, 0, 1, LockKind.WRITE)),
                Workload.readHeavy(0.9),
                0);

        assertThat(h.violations()).isZero();
    }
}
