package io.distlock.kit.history;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Checks a lock history (Theorems 1 and 3, fencing, and the validity behind {@code isHeld()}): on every key, no two
 * holds overlap, fencing tokens grow strictly in acquisition order, and no hold that ended without a release was
 * guaranteed past the next holder's grant.
 *
 * <p>Holds of every {@link io.distlock.LockKind}: each {@linkplain io.distlock.LockKind#space() space} of a key (the
 * lock, the read-write lock, the semaphore) is checked apart, since they never exclude each other. Within one, an
 * exclusive hold (a lock, a write lock) overlaps no other hold, read or write; shared holds (read locks, permits) may
 * overlap each other, but never more of them at once than the smallest limit among them (a semaphore's N). Fencing
 * tokens grow across every exclusive hold: each is above every token granted before it and below every one granted
 * after it (two shared holds' grants may come in either order behind their recorded begins).
 *
 * <p>A hold runs from its {@code ACQUIRED} event to its {@code RELEASING} event. A hold that ended in {@code LOST}
 * (its lease ran out while the holder was frozen) is left out of the overlap check, since a lease cannot stop a
 * frozen holder (that is what fencing tokens are for), but its token is still checked. A hold with no end (its
 * process was killed) is left out of the overlap check too. Events that do not pair up are reported as malformed.
 *
 * <p>What such a hold was promised is checked instead: until the last validity its backend reported ({@code VALID}
 * events, at the grant and at every renewal) it counts as held. A hold it excludes (after an exclusive one, any; after
 * a shared one, an exclusive one) must not begin before that, and a semaphore's permits, counting it, stay within
 * their limit. Otherwise {@code isHeld()} told the lost holder it held the lock while the store had already given it
 * to another owner.
 */
public final class HistoryChecker {

    private HistoryChecker() {}

    /** One hold: from acquisition to release, loss, or nothing known. */
    record Hold(HistoryEvent begin, Optional<HistoryEvent> end) {
        boolean released() {
            return end.isPresent() && end.get().type() == HistoryEvent.Type.RELEASING;
        }

        @Override
        public String toString() {
            return "["
                    + (begin.kind() == io.distlock.LockKind.LOCK
                            ? ""
                            : begin.kind().label() + " ")
                    + begin.holder() + " pid " + begin.pid() + " token "
                    + (begin.token().isPresent() ? Long.toString(begin.token().getAsLong()) : "-")
                    + ": acquired at " + begin.nanos()
                    + end.map(e -> ", " + e.type().name().toLowerCase(java.util.Locale.ROOT) + " at " + e.nanos())
                            .orElse(", never released")
                    + "]";
        }
    }

    /**
     * Reads and merges every {@code *.history} file in {@code directory}.
     *
     * @throws UncheckedIOException if the directory cannot be read
     * @throws IllegalArgumentException if a line is malformed
     */
    public static List<HistoryEvent> read(Path directory) {
        List<HistoryEvent> events = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(HistoryRecorder.SUFFIX))
                    .sorted()::iterator) {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    if (!line.isBlank()) {
                        events.add(HistoryEvent.parse(line));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read the histories in " + directory, e);
        }
        return events;
    }

    /**
     * Every violation in {@code events}, one readable line each naming the offending holds; empty if the history is
     * consistent. The events may come in any order.
     */
    public static List<String> violations(Collection<HistoryEvent> events) {
        List<String> violations = new ArrayList<>();
        Map<String, List<Hold>> holdsByKey = new TreeMap<>(); // by space and key: see name(HistoryEvent)
        Map<String, Long> validUntil = new LinkedHashMap<>();
        for (HistoryEvent e : events) {
            if (e.type() == HistoryEvent.Type.VALID) {
                validUntil.merge(e.holder(), e.validUntil().getAsLong(), Math::max);
            }
        }
        for (Hold hold : pair(events, violations)) {
            holdsByKey
                    .computeIfAbsent(name(hold.begin()), k -> new ArrayList<>())
                    .add(hold);
        }
        for (Map.Entry<String, List<Hold>> entry : holdsByKey.entrySet()) {
            List<Hold> holds = entry.getValue();
            holds.sort(Comparator.comparingLong(h -> h.begin().nanos()));
            checkOverlaps(entry.getKey(), holds, violations);
            checkLimits(entry.getKey(), holds, validUntil, violations);
            checkTokens(entry.getKey(), holds, violations);
            checkValidity(entry.getKey(), holds, validUntil, violations);
        }
        checkUnrecordedGrants(events, holdsByKey, violations);
        return violations;
    }

    /**
     * Where a hold competes: its key, and for the kinds other than the lock their space, as the checker's messages
     * show it ({@code k}, {@code k (read-write lock)}, {@code k (semaphore)}).
     */
    private static String name(HistoryEvent e) {
        return switch (e.kind().space()) {
            case LOCK -> e.key();
            case READ_WRITE -> e.key() + " (read-write lock)";
            case SEMAPHORE -> e.key() + " (semaphore)";
        };
    }

    /** A grant the backend reported ({@code VALID}) that never began a hold in the history. */
    private record UnrecordedGrant(
            String key, String holder, long grantedBy, long validUntil, long freedAt, boolean exclusive) {
        long promisedUntil() {
            return freedAt - validUntil < 0 ? freedAt : validUntil;
        }
    }

    /**
     * A grant that never reached its caller as held (its lease ran out, or it was lost, on the way; the locker then
     * frees it) is no hold, but the store still promised it: from its grant until the earlier of its reported validity
     * and its release ({@code FREED}), no other holder may be granted the key. Checked against the first hold that
     * began after the grant.
     */
    private static void checkUnrecordedGrants(
            Collection<HistoryEvent> events, Map<String, List<Hold>> holdsByKey, List<String> violations) {
        java.util.Set<String> began = new java.util.HashSet<>();
        Map<String, UnrecordedGrant> grants = new LinkedHashMap<>();
        Map<String, Long> freedAt = new java.util.HashMap<>();
        for (HistoryEvent e : events) {
            switch (e.type()) {
                case ACQUIRED -> began.add(e.holder());
                case FREED -> freedAt.merge(e.holder(), e.nanos(), Math::min);
                case VALID ->
                    grants.merge(
                            e.holder(),
                            new UnrecordedGrant(
                                    name(e),
                                    e.holder(),
                                    e.nanos(),
                                    e.validUntil().getAsLong(),
                                    Long.MAX_VALUE,
                                    e.exclusive()),
                            (a, b) -> new UnrecordedGrant(
                                    a.key(),
                                    a.holder(),
                                    Math.min(a.grantedBy(), b.grantedBy()),
                                    Math.max(a.validUntil(), b.validUntil()),
                                    Long.MAX_VALUE,
                                    a.exclusive()));
                default -> {}
            }
        }
        for (UnrecordedGrant g : grants.values()) {
            if (began.contains(g.holder())) {
                continue;
            }
            UnrecordedGrant grant = new UnrecordedGrant(
                    g.key(),
                    g.holder(),
                    g.grantedBy(),
                    g.validUntil(),
                    freedAt.getOrDefault(g.holder(), Long.MAX_VALUE),
                    g.exclusive());
            for (Hold next : holdsByKey.getOrDefault(grant.key(), List.of())) {
                long grantedBy = next.begin().nanos();
                if (grantedBy - grant.grantedBy() <= 0) {
                    continue;
                }
                if (!grant.exclusive() && !next.begin().exclusive()) {
                    break; // two shared grants (readers, permits) may be held at once; their limit is not checked here
                }
                if (grantedBy - grant.promisedUntil() < 0) {
                    violations.add("a grant that never reached its caller as held, on key '" + grant.key() + "': "
                            + grant.holder() + ", granted by " + grant.grantedBy() + ", was promised until "
                            + grant.promisedUntil() + " (its reported validity, or its release if sooner), but "
                            + next + " was granted by " + grantedBy + ", "
                            + (grant.promisedUntil() - grantedBy) / 1_000_000 + " ms earlier");
                }
                break; // only the first hold after the grant matters
            }
        }
    }

    /**
     * Checks {@code events} and fails with every violation in the message.
     *
     * @throws AssertionError if holds overlap, tokens do not grow, or events do not pair up
     */
    public static void assertConsistent(Collection<HistoryEvent> events) {
        List<String> violations = violations(events);
        if (!violations.isEmpty()) {
            int shown = Math.min(violations.size(), 10);
            throw new AssertionError("The lock history of " + events.size() + " events has " + violations.size()
                    + " violation(s)" + (shown < violations.size() ? ", the first " + shown : "") + ":\n  "
                    + String.join("\n  ", violations.subList(0, shown)));
        }
    }

    private static List<Hold> pair(Collection<HistoryEvent> events, List<String> violations) {
        List<HistoryEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(HistoryEvent::nanos));
        Map<String, HistoryEvent> open = new LinkedHashMap<>();
        Map<String, Hold> closed = new LinkedHashMap<>();
        List<Hold> holds = new ArrayList<>();
        for (HistoryEvent e : sorted) {
            if (e.type() == HistoryEvent.Type.VALID || e.type() == HistoryEvent.Type.FREED) {
                continue; // checked by checkValidity and checkUnrecordedGrants
            }
            if (e.type() == HistoryEvent.Type.ACQUIRED) {
                if (open.containsKey(e.holder()) || closed.containsKey(e.holder())) {
                    violations.add("holder " + e.holder() + " acquired twice: " + e);
                    continue;
                }
                open.put(e.holder(), e);
                continue;
            }
            HistoryEvent begin = open.remove(e.holder());
            if (begin == null) {
                if (!closed.containsKey(e.holder())) {
                    violations.add("holder " + e.holder() + " ended a hold it never began: " + e);
                }
                continue; // a loss reported after the release began, or a second end: nothing more to check
            }
            if (!begin.key().equals(e.key())) {
                violations.add("holder " + e.holder() + " began on '" + begin.key() + "' and ended on '" + e.key()
                        + "': " + e);
                continue;
            }
            Hold hold = new Hold(begin, Optional.of(e));
            closed.put(e.holder(), hold);
            holds.add(hold);
        }
        for (HistoryEvent begin : open.values()) {
            holds.add(new Hold(begin, Optional.empty()));
        }
        return holds;
    }

    /**
     * An exclusive hold overlaps no other hold of its space, and no hold overlaps an exclusive one. Holds are sorted by
     * their begin; a pair overlaps when the later begins before the earlier ends, so each hold is compared with the
     * released hold (of any kind, or exclusive) that ends last among those begun before it.
     */
    private static void checkOverlaps(String key, List<Hold> holds, List<String> violations) {
        Hold latest = null; // the released hold that ends last among those begun so far
        Hold latestExclusive = null; // the same among the exclusive ones
        for (Hold hold : holds) {
            Hold other = hold.begin().exclusive() ? latest : latestExclusive;
            if (other != null
                    && hold.begin().nanos() < other.end().orElseThrow().nanos()) {
                violations.add("overlapping holds on key '" + key + "': " + other + " and " + hold + " ("
                        + (other.end().orElseThrow().nanos() - hold.begin().nanos()) + " ns both held"
                        + (hold.begin().kind() == io.distlock.LockKind.LOCK
                                ? ""
                                : ", a "
                                        + (hold.begin().exclusive() ? hold : other)
                                                .begin()
                                                .kind()
                                                .label() + " hold beside another")
                        + ")");
            }
            if (hold.released()) {
                if (endsLater(hold, latest)) {
                    latest = hold;
                }
                if (hold.begin().exclusive() && endsLater(hold, latestExclusive)) {
                    latestExclusive = hold;
                }
            }
        }
    }

    private static boolean endsLater(Hold hold, Hold than) {
        return than == null
                || hold.end().orElseThrow().nanos() > than.end().orElseThrow().nanos();
    }

    /**
     * Shared holds with a limit (a semaphore's permits): at no moment more of them held at once than the smallest
     * limit among them. A released hold counts until its release; one that was not (lost, or its process killed)
     * until the last validity its backend reported, since that is what {@code isHeld()} told its holder (one with no
     * validity reported, or none left at its begin, is left out). Sweeps the holds in order of their begins, keeping
     * those not yet ended.
     */
    private static void checkLimits(
            String key, List<Hold> holds, Map<String, Long> validUntil, List<String> violations) {
        java.util.PriorityQueue<Counted> held = new java.util.PriorityQueue<>(Comparator.comparingLong(Counted::until));
        for (Hold hold : holds) {
            if (hold.begin().exclusive()) {
                continue;
            }
            Long until = hold.released()
                    ? Long.valueOf(hold.end().orElseThrow().nanos())
                    : validUntil.get(hold.begin().holder());
            if (until == null || until - hold.begin().nanos() <= 0) {
                continue; // no validity reported, or none left by the time the hold was recorded
            }
            while (!held.isEmpty() && held.peek().until() - hold.begin().nanos() <= 0) {
                held.poll();
            }
            held.add(new Counted(hold, until));
            int limit =
                    held.stream().mapToInt(c -> c.hold().begin().limit()).min().orElseThrow();
            if (held.size() > limit) {
                List<String> promised = held.stream()
                        .filter(c -> !c.hold().released())
                        .map(c -> c.hold() + " valid until " + c.until())
                        .toList();
                violations.add("more holds at once than the limit on key '" + key + "': " + held.size()
                        + " held at once, limit " + limit + ": "
                        + held.stream().map(Counted::hold).toList()
                        + (promised.isEmpty()
                                ? ""
                                : " (counting, until the validity its backend reported, " + String.join(", ", promised)
                                        + ")"));
                held.poll(); // report each excess once
            }
        }
    }

    /** A shared hold counted against its limit until {@code until}: its release, or the validity last reported. */
    private record Counted(Hold hold, long until) {}

    /** The most holds of a limited shared kind (permits) held at once in {@code events}, over every key and space. */
    public static int mostHeldAtOnce(Collection<HistoryEvent> events) {
        int most = 0;
        Map<String, List<Hold>> byKey = new TreeMap<>();
        for (Hold hold : pair(events, new ArrayList<>())) {
            if (hold.released()) {
                byKey.computeIfAbsent(name(hold.begin()), k -> new ArrayList<>())
                        .add(hold);
            }
        }
        for (List<Hold> holds : byKey.values()) {
            holds.sort(Comparator.comparingLong(h -> h.begin().nanos()));
            java.util.PriorityQueue<Long> ends = new java.util.PriorityQueue<>();
            for (Hold hold : holds) {
                while (!ends.isEmpty() && ends.peek() <= hold.begin().nanos()) {
                    ends.poll();
                }
                ends.add(hold.end().orElseThrow().nanos());
                most = Math.max(most, ends.size());
            }
        }
        return most;
    }

    /**
     * A hold that was not released (lost, or its process killed) was promised until the last validity its backend
     * reported: until then it counts as held. So no hold that it excludes may begin before that: for an exclusive hold
     * (a lock, a write lock) the next hold of any kind, for a shared one (a read lock, a permit) the next exclusive
     * hold. (Shared holds begun within a permit's promise are counted against the limit by {@link #checkLimits}.) The
     * next holder's {@code ACQUIRED} is stamped after its grant, so a correct backend's validity, measured from before
     * its own request, always ends by then.
     */
    private static void checkValidity(
            String key, List<Hold> holds, Map<String, Long> validUntil, List<String> violations) {
        for (int i = 0; i < holds.size(); i++) {
            Hold hold = holds.get(i);
            Long until = validUntil.get(hold.begin().holder());
            if (hold.released() || until == null) {
                continue;
            }
            for (int j = i + 1; j < holds.size(); j++) {
                Hold next = holds.get(j);
                long grantedBy = next.begin().nanos();
                if (grantedBy - until >= 0) {
                    break; // later holds begin later still
                }
                if (hold.begin().exclusive() || next.begin().exclusive()) {
                    violations.add("validity outlived the lock on key '" + key + "': " + hold
                            + " was reported valid until " + until + ", but " + next + " was granted by " + grantedBy
                            + ", " + (until - grantedBy) / 1_000_000 + " ms earlier: the backend reported a validity"
                            + " too generous, so isHeld() said true while another owner held the lock");
                    break; // report the first only
                }
            }
        }
    }

    /**
     * Tokens grow across exclusive holds: in order of begins, an exclusive hold's token is above every token before it,
     * and every token after it is above its own. (For a lock every hold is exclusive: the tokens grow strictly.)
     */
    private static void checkTokens(String key, List<Hold> holds, List<String> violations) {
        long withToken =
                holds.stream().filter(h -> h.begin().token().isPresent()).count();
        if (withToken == 0) {
            return;
        }
        if (withToken < holds.size()) {
            violations.add("key '" + key + "': " + (holds.size() - withToken) + " of " + holds.size()
                    + " holds have no fencing token, e.g. "
                    + holds.stream()
                            .filter(h -> h.begin().token().isEmpty())
                            .findFirst()
                            .orElseThrow());
        }
        Hold highest = null; // the hold with the highest token so far
        Hold lastExclusive = null;
        for (Hold hold : holds) {
            OptionalLong token = hold.begin().token();
            if (token.isEmpty()) {
                continue;
            }
            Hold before = hold.begin().exclusive() ? highest : lastExclusive;
            if (before != null && token.getAsLong() <= before.begin().token().getAsLong()) {
                violations.add("fencing token not increasing on key '" + key + "': " + before + " then " + hold);
            }
            if (highest == null || token.getAsLong() > highest.begin().token().getAsLong()) {
                highest = hold;
            }
            if (hold.begin().exclusive()) {
                lastExclusive = hold;
            }
        }
    }
}
