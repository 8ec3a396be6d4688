package io.distlock.kit.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockKind;
import io.distlock.kit.history.HistoryEvent.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryCheckerTest {

    private static HistoryEvent event(long nanos, Type type, String key, long token, String holder) {
        return new HistoryEvent(nanos, type, key, token < 0 ? OptionalLong.empty() : OptionalLong.of(token), holder, 1);
    }

    private static List<HistoryEvent> hold(String key, long from, long to, long token, String holder) {
        return List.of(event(from, Type.ACQUIRED, key, token, holder), event(to, Type.RELEASING, key, token, holder));
    }

    private static List<HistoryEvent> history(List<List<HistoryEvent>> holds) {
        List<HistoryEvent> all = new ArrayList<>();
        holds.forEach(all::addAll);
        return all;
    }

    @Test
    void consecutiveHolds_increasingTokens_areConsistent() {
        List<HistoryEvent> h =
                history(List.of(hold("k", 10, 20, 1, "a"), hold("k", 21, 30, 2, "b"), hold("k", 31, 40, 5, "c")));
        assertEquals(List.of(), HistoryChecker.violations(h));
        HistoryChecker.assertConsistent(h);
    }

    @Test
    void overlappingHolds_areRejected_namingBoth() {
        List<HistoryEvent> h = history(List.of(hold("k", 10, 20, 1, "a"), hold("k", 15, 30, 2, "b")));
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.assertConsistent(h));
        assertTrue(e.getMessage().contains("overlapping holds on key 'k'"), e.getMessage());
        assertTrue(
                e.getMessage().contains("[a pid 1 token 1") && e.getMessage().contains("[b pid 1 token 2"),
                e.getMessage());
    }

    @Test
    void holdInsideAnotherHold_isRejected() {
        List<HistoryEvent> h =
                history(List.of(hold("k", 10, 100, 1, "a"), hold("k", 20, 30, 2, "b"), hold("k", 40, 50, 3, "c")));
        assertEquals(
                2,
                HistoryChecker.violations(h).size(),
                HistoryChecker.violations(h).toString());
    }

    @Test
    void holdsOnDifferentKeys_mayOverlap() {
        List<HistoryEvent> h = history(List.of(hold("k1", 10, 20, 1, "a"), hold("k2", 15, 30, 1, "b")));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void decreasingOrRepeatedTokens_areRejected() {
        List<HistoryEvent> falling = history(List.of(hold("k", 10, 20, 5, "a"), hold("k", 21, 30, 4, "b")));
        assertTrue(HistoryChecker.violations(falling).get(0).contains("fencing token not increasing"));
        List<HistoryEvent> repeated = history(List.of(hold("k", 10, 20, 5, "a"), hold("k", 21, 30, 5, "b")));
        assertEquals(1, HistoryChecker.violations(repeated).size());
    }

    @Test
    void missingToken_amongTokens_isRejected() {
        List<HistoryEvent> h = history(List.of(hold("k", 10, 20, 1, "a"), hold("k", 21, 30, -1, "b")));
        assertTrue(HistoryChecker.violations(h).get(0).contains("no fencing token"));
    }

    @Test
    void noTokensAtAll_isFine() {
        List<HistoryEvent> h = history(List.of(hold("k", 10, 20, -1, "a"), hold("k", 21, 30, -1, "b")));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void lostHold_isLeftOutOfOverlap_butTokensStillChecked() {
        List<HistoryEvent> h = new ArrayList<>();
        h.add(event(10, Type.ACQUIRED, "k", 1, "frozen"));
        h.add(event(50, Type.LOST, "k", 1, "frozen"));
        h.addAll(hold("k", 30, 40, 2, "next"));
        assertEquals(List.of(), HistoryChecker.violations(h));
        h.addAll(hold("k", 60, 70, 1, "stale-token"));
        assertEquals(1, HistoryChecker.violations(h).size());
    }

    @Test
    void killedHolder_withoutEnd_isNotAnOverlap() {
        List<HistoryEvent> h = new ArrayList<>();
        h.add(event(10, Type.ACQUIRED, "k", 1, "killed"));
        h.addAll(hold("k", 30, 40, 2, "next"));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void malformedPairs_areRejected() {
        List<HistoryEvent> endWithoutBegin = List.of(event(10, Type.RELEASING, "k", 1, "ghost"));
        assertTrue(HistoryChecker.violations(endWithoutBegin).get(0).contains("never began"));
        List<HistoryEvent> twice =
                List.of(event(10, Type.ACQUIRED, "k", 1, "a"), event(20, Type.ACQUIRED, "k", 2, "a"));
        assertTrue(HistoryChecker.violations(twice).get(0).contains("acquired twice"));
    }

    @Test
    void eventsInAnyOrder_areSortedByTime() {
        List<HistoryEvent> h = new ArrayList<>(history(List.of(hold("k", 10, 20, 1, "a"), hold("k", 21, 30, 2, "b"))));
        java.util.Collections.reverse(h);
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void filesOfSeveralRecorders_mergeIntoOneTimeline(@TempDir Path dir) throws Exception {
        try (HistoryRecorder one = HistoryRecorder.toDirectory(dir);
                HistoryRecorder two = HistoryRecorder.toDirectory(dir)) {
            hold("k", 10, 20, 1, "a").forEach(one::record);
            hold("k key/with spaces", 12, 22, 1, "c").forEach(one::record);
            hold("k", 15, 30, 2, "b").forEach(two::record);
        }
        try (var files = Files.list(dir)) {
            assertEquals(2, files.count());
        }
        List<HistoryEvent> merged = HistoryChecker.read(dir);
        assertEquals(6, merged.size());
        assertTrue(merged.stream().anyMatch(e -> e.key().equals("k key/with spaces")));
        List<String> violations = HistoryChecker.violations(merged);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(violations.get(0).contains("overlapping"));
    }

    @Test
    void line_roundTrips_andGarbageIsRejected() {
        HistoryEvent e = event(123, Type.LOST, "a b\tc", 7, "holder.1@host");
        assertEquals(e, HistoryEvent.parse(e.toLine()));
        assertThrows(IllegalArgumentException.class, () -> HistoryEvent.parse("1 ACQUIRED k"));
        assertThrows(IllegalArgumentException.class, () -> HistoryEvent.parse("x ACQUIRED k 1 h 1"));
    }

    private static HistoryEvent valid(long nanos, String key, String holder, long until) {
        return new HistoryEvent(nanos, Type.VALID, key, OptionalLong.empty(), holder, 1, OptionalLong.of(until));
    }

    @Test
    void lostHold_validUntilBeforeNextGrant_isConsistent() {
        List<HistoryEvent> h = List.of(
                event(10, Type.ACQUIRED, "k", -1, "a"),
                valid(11, "k", "a", 50),
                valid(30, "k", "a", 70),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(90, Type.LOST, "k", -1, "a"),
                event(95, Type.RELEASING, "k", -1, "b"));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void lostHold_validUntilAfterNextGrant_isRejected_namingBoth() {
        List<HistoryEvent> h = List.of(
                event(10, Type.ACQUIRED, "k", -1, "a"),
                valid(11, "k", "a", 50),
                valid(30, "k", "a", 2_000_070),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(90, Type.LOST, "k", -1, "a"),
                event(95, Type.RELEASING, "k", -1, "b"));
        List<String> violations = HistoryChecker.violations(h);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(violations.get(0).contains("validity outlived the lock on key 'k'"), violations.get(0));
        assertTrue(violations.get(0).contains("[a pid 1") && violations.get(0).contains("[b pid 1"), violations.get(0));
    }

    @Test
    void killedHold_validUntilAfterNextGrant_isRejected() {
        List<HistoryEvent> h = List.of(
                event(10, Type.ACQUIRED, "k", -1, "a"),
                valid(11, "k", "a", 500),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(95, Type.RELEASING, "k", -1, "b"));
        assertEquals(
                1,
                HistoryChecker.violations(h).size(),
                HistoryChecker.violations(h).toString());
    }

    @Test
    void releasedHold_validUntilAfterNextGrant_isConsistent() {
        List<HistoryEvent> h = List.of(
                event(10, Type.ACQUIRED, "k", -1, "a"),
                valid(11, "k", "a", 500),
                event(40, Type.RELEASING, "k", -1, "a"),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(95, Type.RELEASING, "k", -1, "b"));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    /** A grant lost on its way to the caller is never a hold; what the store promised it is still checked. */
    @Test
    void unrecordedGrant_validPastTheNextGrant_isRejected() {
        List<HistoryEvent> h = List.of(
                valid(10, "k", "a", 500),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(95, Type.RELEASING, "k", -1, "b"),
                event(600, Type.FREED, "k", -1, "a"));
        List<String> violations = HistoryChecker.violations(h);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(violations.get(0).contains("never reached its caller"), violations.get(0));
        assertTrue(violations.get(0).contains("a, granted by 10")
                && violations.get(0).contains("[b pid 1"));
    }

    @Test
    void unrecordedGrant_validOrFreedBeforeTheNextGrant_isConsistent() {
        List<HistoryEvent> ranOut = List.of(
                valid(10, "k", "a", 50),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(95, Type.RELEASING, "k", -1, "b"));
        assertEquals(List.of(), HistoryChecker.violations(ranOut));
        List<HistoryEvent> freed = List.of(
                valid(10, "k", "a", 500),
                event(40, Type.FREED, "k", -1, "a"),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(95, Type.RELEASING, "k", -1, "b"));
        assertEquals(List.of(), HistoryChecker.violations(freed));
    }

    @Test
    void freedEvents_ofRecordedHolds_changeNothing() {
        List<HistoryEvent> h = List.of(
                event(10, Type.ACQUIRED, "k", -1, "a"),
                valid(11, "k", "a", 500),
                event(40, Type.RELEASING, "k", -1, "a"),
                event(41, Type.FREED, "k", -1, "a"),
                event(80, Type.ACQUIRED, "k", -1, "b"),
                event(95, Type.RELEASING, "k", -1, "b"),
                event(96, Type.FREED, "k", -1, "b"));
        assertEquals(List.of(), HistoryChecker.violations(h));
        HistoryEvent freed = event(41, Type.FREED, "a key", 3, "a");
        assertEquals(freed, HistoryEvent.parse(freed.toLine()));
    }

    @Test
    void validEvent_roundTripsAsALine() {
        HistoryEvent e = valid(5, "a key", "h", 99);
        assertEquals(e, HistoryEvent.parse(e.toLine()));
        assertThrows(
                IllegalArgumentException.class,
                () -> new HistoryEvent(1, Type.VALID, "k", OptionalLong.empty(), "h", 1, OptionalLong.empty()));
    }

    private static List<HistoryEvent> hold(LockKind kind, int limit, long from, long to, long token, String holder) {
        OptionalLong t = token < 0 ? OptionalLong.empty() : OptionalLong.of(token);
        return List.of(
                new HistoryEvent(from, Type.ACQUIRED, "k", t, holder, 1, OptionalLong.empty(), kind, limit),
                new HistoryEvent(to, Type.RELEASING, "k", t, holder, 1, OptionalLong.empty(), kind, limit));
    }

    private static List<HistoryEvent> read(long from, long to, long token, String holder) {
        return hold(LockKind.READ, Integer.MAX_VALUE, from, to, token, holder);
    }

    private static List<HistoryEvent> write(long from, long to, long token, String holder) {
        return hold(LockKind.WRITE, 1, from, to, token, holder);
    }

    @Test
    void overlappingReads_areConsistent_tokensInEitherOrder() {
        List<HistoryEvent> h = history(
                List.of(read(10, 50, 2, "a"), read(20, 30, 1, "b"), read(25, 60, 3, "c"), write(61, 70, 4, "w")));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void aWriteOverlappingARead_isRejected_whicheverBeganFirst() {
        List<String> writeInside =
                HistoryChecker.violations(history(List.of(read(10, 50, 1, "r"), write(20, 30, 2, "w"))));
        assertEquals(1, writeInside.size(), writeInside.toString());
        assertTrue(writeInside.get(0).contains("overlapping holds on key 'k (read-write lock)'"), writeInside.get(0));
        assertTrue(writeInside.get(0).contains("a write hold beside another"), writeInside.get(0));
        List<String> readInside =
                HistoryChecker.violations(history(List.of(write(10, 50, 1, "w"), read(20, 60, 2, "r"))));
        assertEquals(1, readInside.size(), readInside.toString());
        List<String> twoWrites =
                HistoryChecker.violations(history(List.of(write(10, 50, 1, "w"), write(49, 60, 2, "v"))));
        assertEquals(1, twoWrites.size(), twoWrites.toString());
    }

    @Test
    void theSpaces_ofOneKey_neverExcludeEachOther() {
        List<HistoryEvent> h = history(
                List.of(hold("k", 10, 50, 1, "lock"), write(20, 30, 2, "w"), hold(LockKind.PERMIT, 1, 25, 40, 3, "p")));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void morePermitsAtOnce_thanTheLimit_areRejected_andTheMostAtOnceIsCounted() {
        List<HistoryEvent> two = history(List.of(
                hold(LockKind.PERMIT, 2, 10, 50, 1, "a"),
                hold(LockKind.PERMIT, 2, 20, 30, 2, "b"),
                hold(LockKind.PERMIT, 2, 31, 60, 3, "c")));
        assertEquals(List.of(), HistoryChecker.violations(two));
        assertEquals(2, HistoryChecker.mostHeldAtOnce(two));
        List<HistoryEvent> three = history(List.of(
                hold(LockKind.PERMIT, 2, 10, 50, 1, "a"),
                hold(LockKind.PERMIT, 2, 20, 30, 2, "b"),
                hold(LockKind.PERMIT, 2, 25, 60, 3, "c")));
        List<String> violations = HistoryChecker.violations(three);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(violations.get(0).contains("3 held at once, limit 2"), violations.get(0));
        assertEquals(3, HistoryChecker.mostHeldAtOnce(three));
    }

    /** A hold of {@code kind} whose holder was told it holds until {@code validUntil}, then lost at {@code lostAt}. */
    private static List<HistoryEvent> lost(
            LockKind kind, int limit, long from, long validUntil, long lostAt, String holder) {
        return List.of(
                new HistoryEvent(
                        from, Type.ACQUIRED, "k", OptionalLong.empty(), holder, 1, OptionalLong.empty(), kind, limit),
                new HistoryEvent(
                        from + 1,
                        Type.VALID,
                        "k",
                        OptionalLong.empty(),
                        holder,
                        1,
                        OptionalLong.of(validUntil),
                        kind,
                        limit),
                new HistoryEvent(
                        lostAt, Type.LOST, "k", OptionalLong.empty(), holder, 1, OptionalLong.empty(), kind, limit));
    }

    /** A lost permit is still promised until its validity, but a semaphore has more permits than one. */
    @Test
    void lostPermit_validPastTheNextPermitsGrant_withinTheLimit_isConsistent() {
        List<HistoryEvent> h = history(List.of(
                lost(LockKind.PERMIT, 2, 10, 500, 20, "a"),
                hold(LockKind.PERMIT, 2, 80, 300, -1, "b"),
                hold(LockKind.PERMIT, 2, 310, 400, -1, "c")));
        assertEquals(List.of(), HistoryChecker.violations(h));
    }

    @Test
    void lostPermit_countedUntilItsValidity_pastTheLimit_isRejected() {
        List<HistoryEvent> h = history(List.of(
                lost(LockKind.PERMIT, 2, 10, 500, 20, "a"),
                hold(LockKind.PERMIT, 2, 80, 300, -1, "b"),
                hold(LockKind.PERMIT, 2, 100, 200, -1, "c"),
                hold(LockKind.PERMIT, 2, 501, 600, -1, "d")));
        List<String> violations = HistoryChecker.violations(h);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(violations.get(0).contains("3 held at once, limit 2"), violations.get(0));
        assertTrue(
                violations.get(0).contains("[permit a pid 1")
                        && violations.get(0).contains("valid until 500"),
                violations.get(0));
    }

    @Test
    void lostRead_validPastAnotherReadsGrant_isConsistent_butNotPastAWritesGrant() {
        List<HistoryEvent> reads = history(List.of(
                lost(LockKind.READ, Integer.MAX_VALUE, 10, 500, 20, "a"),
                read(80, 95, -1, "b"),
                write(501, 600, -1, "w")));
        assertEquals(List.of(), HistoryChecker.violations(reads));
        List<HistoryEvent> write = history(List.of(
                lost(LockKind.READ, Integer.MAX_VALUE, 10, 500, 20, "a"),
                read(80, 95, -1, "b"),
                write(100, 120, -1, "w")));
        List<String> violations = HistoryChecker.violations(write);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(
                violations.get(0).contains("validity outlived the lock on key 'k (read-write lock)'"),
                violations.get(0));
        assertTrue(violations.get(0).contains("[write w pid 1"), violations.get(0));
        List<HistoryEvent> lostWrite =
                history(List.of(lost(LockKind.WRITE, 1, 10, 500, 20, "w"), read(80, 95, -1, "b")));
        assertEquals(
                1,
                HistoryChecker.violations(lostWrite).size(),
                HistoryChecker.violations(lostWrite).toString());
    }

    @Test
    void tokens_mustGrowAcrossAWrite() {
        List<String> below = HistoryChecker.violations(history(List.of(read(10, 20, 5, "r"), write(30, 40, 4, "w"))));
        assertEquals(1, below.size(), below.toString());
        assertTrue(below.get(0).contains("fencing token not increasing"), below.get(0));
        List<String> after = HistoryChecker.violations(history(List.of(write(10, 20, 5, "w"), read(30, 40, 3, "r"))));
        assertEquals(1, after.size(), after.toString());
    }

    @Test
    void kindAndLimit_surviveTheLineFormat_andSevenFieldLinesAreLocks() {
        HistoryEvent permit = hold(LockKind.PERMIT, 3, 10, 20, 7, "p").get(0);
        assertEquals(permit, HistoryEvent.parse(permit.toLine()));
        HistoryEvent reader = read(10, 20, -1, "r").get(0);
        assertEquals(reader, HistoryEvent.parse(reader.toLine()));
        HistoryEvent lock = HistoryEvent.parse("10 ACQUIRED k 1 h 1 -");
        assertEquals(LockKind.LOCK, lock.kind());
        assertEquals(1, lock.limit());
    }
}
