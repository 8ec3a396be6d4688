package io.distlock.redis;

import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Push wake-up: every release publishes the freed key on one channel per master ({@code <prefix>released}); this
 * listens on that channel through one pub/sub connection per master (opened with the backend, in the
 * background), however many keys are waited on, and wakes one local waiter ({@link WakeUps#wakeOne}) of the key named
 * in each release.
 *
 * <p>One channel for all keys means no subscribe and unsubscribe per wait (the races and leaked subscriptions of
 * per-lock channels), at the cost of every waiting locker hearing every release of its prefix; a message for a key
 * nobody here waits on is one map lookup. A locker is subscribed only while it waits, and for a second after (the
 * release of a lock it had waited for counts as a wait: its next acquisition within the courtesy waits for its turn,
 * which a message brings): one that waits for nothing hears nothing, not even its own releases. Messages can be lost (a master restarting, a
 * reconnecting subscriber), so every waiter also polls on a timer.
 *
 * <p>A release is heard once from every master that deleted the key; each message names the release (the random part
 * of the released value), and a release wakes at most one waiter here however many masters tell it. Over several
 * masters the wake-up waits until a majority of them has told the release (a {@code SET NX} sent after the first
 * message alone can find the key not yet deleted on the others and split the vote), or {@code instanceTimeout} after
 * the first message, whichever comes first (see {@link Release}); then comes a random delay of at most {@code
 * retryDelay} (seed 002's random retry delay): every locker hears the release at about the same instant, and their
 * woken waiters would otherwise send their {@code SET NX} to the masters together and split the votes. One master
 * cannot split a vote (one {@code SET NX} wins, the others answer "no"), so there the waiter is woken at once, on the
 * thread that heard the message: a delay would only leave the lock free meanwhile. This
 * locker's own release of a key that other lockers take too wakes its own waiter only after the releaser's courtesy
 * ({@link HandOffCourtesy#heard}), so that their woken waiters try first, and within that courtesy the other lockers'
 * releases wake nobody here until this locker's turn comes round. On the same channel a locker whose waiter found a
 * key held says that it waits ({@link #waiting}), so that the others count it among the lockers whose turn comes
 * before theirs.
 */
final class ReleaseMessages {

    /** How many recent releases are remembered to drop the repeats of a release heard from several masters. */
    private static final int REMEMBERED_RELEASES = 1024;

    /** How long the subscriptions outlive the last wait. */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Length of the release id that starts a message, then a space, then the key (see {@code release.lua}). */
    static final int RELEASE_ID_LENGTH = 40;

    /**
     * What starts a message that names no release but a locker that waits for a key: this, the locker's id ({@link
     * HandOffCourtesy#LOCKER_ID_LENGTH} characters), a space, the key ({@link #waiting}). A locker of an older version
     * reads from it a key that nobody waits on, and does nothing.
     */
    static final String WAITING = "waiting ";

    private final List<Master> masters;
    private final String channel;
    private final int majority;
    private final WakeUps wakeUps;
    private final ScheduledExecutorService timers;
    private final long jitterNanos;
    private final long majorityWithinNanos;
    private final HandOffCourtesy courtesy;
    /** When a waiter last wanted the messages (a {@link System#nanoTime()} reading); guarded by this. */
    private long lastWait;
    /** Whether {@link #unsubscribeIfIdle} is due; guarded by this. */
    private boolean idleCheckArmed;

    /** Recent releases by id, to count the masters that told each; guarded by itself. */
    private final Map<String, Release> heard = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Release> eldest) {
            return size() > REMEMBERED_RELEASES;
        }
    };

    ReleaseMessages(
            List<Master> masters,
            String channel,
            int majority,
            WakeUps wakeUps,
            ScheduledExecutorService timers,
            Duration jitter,
            Duration majorityWithin,
            HandOffCourtesy courtesy) {
        this.masters = masters;
        this.channel = channel;
        this.majority = majority;
        this.wakeUps = wakeUps;
        this.timers = timers;
        this.jitterNanos = masters.size() > 1 ? jitter.toNanos() : 0;
        this.majorityWithinNanos = majorityWithin.toNanos();
        this.courtesy = courtesy;
    }

    /**
     * Opens the pub/sub connections, in the background, without subscribing: a locker's first waiter would otherwise
     * pay for them (and, in a fresh JVM, their classes) while its rivals are already woken by messages.
     */
    void open() {
        for (Master m : masters) {
            m.openPubSub(channel, this::released);
        }
    }

    /**
     * Subscribes on every master not yet subscribed (a wait after none for a while, or after a failed subscription).
     * Completes when a majority is subscribed (a release deletes on a majority, so it publishes on at least one of
     * them) or when every subscription has settled. The subscriptions end once nothing here has waited for {@link
     * #IDLE_NANOS}.
     */
    CompletableFuture<Void> subscribed() {
        List<CompletableFuture<Void>> subs = new ArrayList<>(masters.size());
        synchronized (this) {
            lastWait = System.nanoTime();
            for (Master m : masters) {
                subs.add(m.subscribe(channel, this::released));
            }
            if (!idleCheckArmed) {
                idleCheckArmed = armIdleCheck();
            }
        }
        CompletableFuture<Void> ready = new CompletableFuture<>();
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger settled = new AtomicInteger();
        for (CompletableFuture<Void> s : subs) {
            s.whenComplete((v, e) -> {
                int confirmed = e == null ? ok.incrementAndGet() : ok.get();
                if (heard(confirmed, settled.incrementAndGet())) {
                    ready.complete(null);
                }
            });
        }
        return ready;
    }

    /**
     * The one rule of {@link #subscribed()} and {@link #listening()}: releases are heard once a majority of the masters
     * confirmed the subscription, or once every master's subscription has settled. The two must agree: a waiter that
     * found the locker not listening attempts again when subscribed, and would do so at every attempt otherwise.
     */
    private boolean heard(int confirmed, int settled) {
        return confirmed >= majority || settled == masters.size();
    }

    /**
     * Whether releases are heard now, by the rule {@link #subscribed()} completes on ({@link #heard}). An attempt sent
     * while this is false can find the key held and the release come before the subscription: the waiter must attempt
     * again once subscribed.
     */
    boolean listening() {
        int ok = 0;
        int settled = 0;
        for (Master m : masters) {
            CompletableFuture<Void> s = m.subscription();
            if (s != null && s.isDone()) {
                settled++;
                if (!s.isCompletedExceptionally()) {
                    ok++;
                }
            }
        }
        return heard(ok, settled);
    }

    /**
     * Unsubscribes when nothing waits here and nothing has for {@link #IDLE_NANOS}: a locker that does not wait hears
     * no release, its own included (each was a pub/sub read and a thread woken per release, for nothing). A waiter that
     * comes later subscribes again before it waits, and attempts once more when subscribed.
     */
    private void unsubscribeIfIdle() {
        synchronized (this) {
            if (wakeUps.keysWaitedOn() > 0 || System.nanoTime() - lastWait < IDLE_NANOS) {
                idleCheckArmed = armIdleCheck();
                return;
            }
            idleCheckArmed = false;
            for (Master m : masters) {
                m.unsubscribe(channel);
            }
        }
    }

    /** Guarded by this: whether the check is armed (false when the backend is closing). */
    private boolean armIdleCheck() {
        try {
            timers.schedule(this::unsubscribeIfIdle, IDLE_NANOS, TimeUnit.NANOSECONDS);
            return true;
        } catch (RejectedExecutionException closed) {
            return false;
        }
    }

    /**
     * Tells the other lockers, on the release channel of every master, that a waiter here found {@code redisKey} held,
     * when the courtesy wants them told ({@link HandOffCourtesy#announcesWait}): they count this locker as a rival for
     * their turns. Sent without waiting for the answers; a message lost costs the turn it was for, no more.
     */
    void waiting(String redisKey) {
        if (!courtesy.announcesWait(redisKey)) {
            return;
        }
        String message = WAITING + courtesy.lockerId() + " " + redisKey;
        for (Master m : masters) {
            m.publish(channel, message);
        }
    }

    private void released(String message) {
        int waitingKey = WAITING.length() + HandOffCourtesy.LOCKER_ID_LENGTH + 1;
        if (message.startsWith(WAITING) && message.length() > waitingKey) {
            // Heard from every master, and noted each time: the same locker, the same key.
            courtesy.heardWaiting(message.substring(WAITING.length(), waitingKey - 1), message.substring(waitingKey));
            return;
        }
        boolean named = message.length() > RELEASE_ID_LENGTH && message.charAt(RELEASE_ID_LENGTH) == ' ';
        // A message without a release id (a locker of an older version released) wakes a waiter every time.
        String redisKey = named ? message.substring(RELEASE_ID_LENGTH + 1) : message;
        boolean waitedOn = wakeUps.isWaitedOn(redisKey);
        if (!waitedOn && !(named && courtesy.follows(redisKey))) {
            // Nobody here waits for it (this locker's own release, most often) and no turn is counted: nothing to
            // wake, no timer to set. A waiter that registers later attempts before it waits, so it cannot miss it.
            return;
        }
        if (!named) {
            long jitter = jitter();
            if (jitter == 0) {
                wakeUps.wakeOne(redisKey);
            } else {
                wakeAfter(() -> wakeUps.wakeOne(redisKey), jitter);
            }
            return;
        }
        String release = message.substring(0, RELEASE_ID_LENGTH);
        Release told;
        synchronized (heard) {
            told = heard.get(release);
            if (told != null) {
                // The same release, heard from another master: it may complete the majority a wake-up waits for.
                told.masters++;
                due(told.dueOnMajority(majority));
                return;
            }
            told = new Release(System.nanoTime());
            heard.put(release, told);
        }
        OptionalLong delay = courtesy.heard(release, redisKey);
        if (delay.isEmpty() || !waitedOn) {
            // Another locker's release before this locker's turn (the other lockers' waiters take it), or a turn
            // counted for a locker none of whose waiters waits yet.
            return;
        }
        long courtesyNanos = delay.getAsLong();
        Runnable wake = courtesyNanos == 0
                ? () -> wakeUps.wakeOne(redisKey)
                : () -> {
                    if (!courtesy.turnCame(redisKey)) { // else the locker's turn woke its waiter already
                        wakeUps.wakeOne(redisKey);
                    }
                };
        long wakeDelay = Math.max(courtesyNanos, jitter());
        if (majority == 1 && wakeDelay == 0) {
            wakeUps.wakeOne(redisKey); // sends the attempt without blocking
            return;
        }
        Release owing = told;
        Runnable owed = () -> wakeAfter(wake, Math.max(0, wakeDelay - (System.nanoTime() - owing.firstAt)));
        Runnable due;
        synchronized (heard) {
            owing.owed = owed;
            due = owing.dueOnMajority(majority);
        }
        if (due != null) {
            due.run();
            return;
        }
        wakeAfter(
                () -> {
                    synchronized (heard) {
                        due(owing.take());
                    }
                },
                majorityWithinNanos);
    }

    /** Runs {@code wake} if there is one: it only sets a timer, so it may run where the lock is held. */
    private static void due(Runnable wake) {
        if (wake != null) {
            wake.run();
        }
    }

    /** A random delay of at most {@code retryDelay} on several masters (seed 002's jitter), none on one. */
    private long jitter() {
        return jitterNanos == 0 ? 0 : ThreadLocalRandom.current().nextLong(jitterNanos + 1);
    }

    private void wakeAfter(Runnable wake, long delayNanos) {
        try {
            timers.schedule(wake, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // the backend is closing: its waiters end with it
        }
    }

    /**
     * A release as heard here: from how many masters, and the wake-up it owes. Over several masters the wake-up waits
     * until a majority has told the release (each master tells it right after its delete, so a {@code SET NX} sent
     * sooner finds the key still held on the others, splits the vote and costs a second round), or until {@code
     * instanceTimeout} after the first message: a master that has not deleted by then counts as a "no", as in an
     * acquisition, and a release that deleted on a bare majority may have lost a message. Guarded by the map of
     * releases.
     */
    private static final class Release {
        final long firstAt;
        int masters = 1;
        /** The wake-up owed, or null (none owed, or already on its way). */
        Runnable owed;

        Release(long firstAt) {
            this.firstAt = firstAt;
        }

        /** The owed wake-up, taken, if a majority of the masters has told the release; else null. */
        Runnable dueOnMajority(int majority) {
            return masters >= majority ? take() : null;
        }

        /** The owed wake-up, taken, or null if none is owed. */
        Runnable take() {
            Runnable due = owed;
            owed = null;
            return due;
        }
    }
}
