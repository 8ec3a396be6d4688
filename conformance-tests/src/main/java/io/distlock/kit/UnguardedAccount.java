package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared resource of the in-JVM exclusion tests: state that only a lock protects. Each critical section does an
 * unguarded read-modify-write of a counter and one step of seed 000's ATM (balance 200; withdraw 150 only if the
 * balance is at least 150, otherwise put 150 back), with yields between read and write so that two holders at once
 * lose an update or overdraw the account. A direct detector also notes any second holder inside.
 */
final class UnguardedAccount {

    static final long START_BALANCE = 200;
    static final long AMOUNT = 150;

    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicLong sections = new AtomicLong();
    private final AtomicLong withdrawals = new AtomicLong();
    private final AtomicLong deposits = new AtomicLong();
    private final List<String> overlaps = new ArrayList<>();
    private volatile String holder = "";
    private volatile long counter;
    private volatile long balance = START_BALANCE;
    private volatile long lowest = START_BALANCE;

    /** One critical section by {@code who}; must be called only while holding the lock. */
    void criticalSection(String who) {
        if (inside.incrementAndGet() > 1) {
            synchronized (overlaps) {
                overlaps.add(who + " entered while " + holder + " was inside");
            }
        }
        holder = who;
        try {
            long read = counter;
            Thread.yield();
            counter = read + 1;

            if (balance >= AMOUNT) { // check, hand out the cash, then debit: the seed's ATM
                Thread.yield();
                long after = balance - AMOUNT;
                balance = after;
                withdrawals.incrementAndGet();
                if (after < lowest) {
                    lowest = after;
                }
            } else {
                long read2 = balance;
                Thread.yield();
                balance = read2 + AMOUNT;
                deposits.incrementAndGet();
            }
            sections.incrementAndGet();
        } finally {
            inside.decrementAndGet();
        }
    }

    /** Asserts that no two holders were inside at once and the ATM was never overdrawn, however many sections ran. */
    void assertNoOverlap() {
        assertExclusive(sections.get());
    }

    /** Asserts that {@code expectedSections} ran one at a time: no overlap, no lost update, no overdraft. */
    void assertExclusive(long expectedSections) {
        synchronized (overlaps) {
            assertTrue(
                    overlaps.isEmpty(),
                    () -> "Two holders were inside the critical section at once (" + overlaps.size() + " times), e.g. "
                            + overlaps.subList(0, Math.min(3, overlaps.size())));
        }
        assertEquals(expectedSections, sections.get(), "critical sections run");
        assertEquals(
                expectedSections,
                counter,
                "unguarded counter after " + expectedSections + " increments under the lock (lost updates)");
        assertTrue(lowest >= 0, () -> "the ATM balance went negative: " + lowest + " (two withdrawals at once)");
        assertEquals(
                START_BALANCE - AMOUNT * withdrawals.get() + AMOUNT * deposits.get(),
                balance,
                "ATM balance after " + withdrawals + " withdrawals and " + deposits + " deposits of " + AMOUNT);
    }
}
