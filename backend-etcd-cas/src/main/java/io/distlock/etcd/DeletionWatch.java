package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;
import static io.distlock.etcd.EtcdCalls.text;

import io.distlock.spi.Deadline;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for the deletion of one key that was read at a known revision: a holder's own key, a waiter's predecessor (fair
 * mode) or the held key (cas mode).
 *
 * <p>The watch is created without a start revision. etcd registers a watch whose start revision is not beyond its
 * current revision as <em>unsynced</em>, and only its catch-up loop, every 100 ms, delivers such a watch's events; a
 * waiter that watched from the revision it read + 1 was nearly always unsynced under contention (other writes had moved
 * the revision on), and its wake-up waited for the next tick. A watch without a start revision is synced at once, but
 * starts at etcd's revision when it is created: a deletion between the read and the creation would be missed. So the
 * creation notice's revision is compared with the one the key was read at, and if the store moved on meanwhile, one
 * transaction checks that the key is still there with the create revision that was read. Every deletion is seen:
 * either before the check's read (the check finds the key gone) or after the watch's start (an event).
 */
final class DeletionWatch {

    private static final Logger log = LoggerFactory.getLogger(DeletionWatch.class);

    private DeletionWatch() {}

    /**
     * Watches {@code key}, which existed with {@code createRevision} at store revision {@code readAt}; calls {@code
     * onDeleted} at most once, when that key (this incarnation of it) is deleted. {@code onEnded} gets a failure of the
     * watch (etcd or the connection ended it) or of the check: the key's fate is then unknown, the caller reads again.
     *
     * <p>If {@code versionSeen} is not null, the watch takes the puts on that key too: {@code versionSeen} gets the
     * key's version from each put, and from the check, which such a watch always makes once it has started (the
     * version then, puts before {@code readAt} included); versions may come again or out of order, the caller keeps
     * the highest.
     *
     * @param checkDeadline the deadline of the check transaction, taken when it is sent
     * @param versionSeen told the key's versions (a holder's own key, whose puts are release requests), or null
     * @return the watch, to be closed by the caller when it no longer waits
     */
    static Watch.Watcher start(
            EtcdCalls calls,
            String key,
            long createRevision,
            long readAt,
            Supplier<Deadline> checkDeadline,
            Runnable onDeleted,
            LongConsumer versionSeen,
            Consumer<Throwable> onEnded) {
        AtomicBoolean fired = new AtomicBoolean();
        Runnable deleted = () -> {
            if (fired.compareAndSet(false, true)) {
                onDeleted.run();
            }
        };
        return calls.watchFromNow(
                key,
                versionSeen != null,
                (WatchResponse response) -> {
                    if (response.isCreatedNotify()) {
                        // A put may also have come before readAt: a release request on a waiter's key that was the
                        // holder's by the grant rule before the waiter saw its grant. So a watch of puts always checks.
                        if (response.getHeader().getRevision() > readAt || versionSeen != null) {
                            // the store moved on between the read and the watch's start: was the key deleted there?
                            versionIfStillThere(calls, key, createRevision, checkDeadline.get())
                                    .whenComplete((version, failure) -> {
                                        if (failure != null) {
                                            onEnded.accept(failure);
                                        } else if (version.isEmpty()) {
                                            deleted.run();
                                        } else if (versionSeen != null) {
                                            versionSeen.accept(version.getAsLong());
                                        }
                                    });
                        }
                        return;
                    }
                    for (WatchEvent event : response.getEvents()) {
                        if (versionSeen != null
                                && event.getEventType() == WatchEvent.EventType.PUT
                                && event.getKeyValue().getCreateRevision() == createRevision) {
                            versionSeen.accept(event.getKeyValue().getVersion());
                        }
                        // A member behind the one that answered the read starts the watch at its own, older revision,
                        // and may show the deletion of an earlier key of that name: only a later deletion counts.
                        if (event.getEventType() == WatchEvent.EventType.DELETE
                                && event.getKeyValue().getModRevision() > createRevision) {
                            deleted.run();
                            return;
                        }
                    }
                },
                onEnded);
    }

    /**
     * Watches the range {@code key} to {@code rangeEnd}, in which {@code count} keys with a create revision up to {@code
     * maxCreateRevision} existed at store revision {@code readAt}; calls {@code onDeleted} at most once, when one of
     * them is deleted, after giving {@code deletedKey} the key deleted (null when the check found it gone). As {@link
     * #start}, a store that moved on before the watch started is checked once: fewer such keys than {@code count} means
     * one was deleted meanwhile (no such key can be created any more). A deletion whose event lacks the key's previous
     * key-value counts ({@link #countedDeletion}).
     */
    static Watch.Watcher startRange(
            EtcdCalls calls,
            String key,
            String rangeEnd,
            long maxCreateRevision,
            long count,
            long readAt,
            Supplier<Deadline> checkDeadline,
            Consumer<String> deletedKey,
            Runnable onDeleted,
            Consumer<Throwable> onEnded) {
        AtomicBoolean fired = new AtomicBoolean();
        Consumer<String> deleted = gone -> {
            if (fired.compareAndSet(false, true)) {
                deletedKey.accept(gone);
                onDeleted.run();
            }
        };
        return calls.watchRangeDeletesFromNow(
                key,
                rangeEnd,
                (WatchResponse response) -> {
                    if (response.isCreatedNotify()) {
                        if (response.getHeader().getRevision() > readAt) {
                            countIn(calls, key, rangeEnd, maxCreateRevision, checkDeadline.get())
                                    .whenComplete((now, failure) -> {
                                        if (failure != null) {
                                            onEnded.accept(failure);
                                        } else if (now < count) {
                                            deleted.accept(null);
                                        }
                                    });
                        }
                        return;
                    }
                    for (WatchEvent event : response.getEvents()) {
                        String gone = countedDeletion(event, maxCreateRevision, readAt);
                        if (gone != null) {
                            deleted.accept(gone);
                            return;
                        }
                    }
                },
                onEnded);
    }

    /**
     * The key {@code event} deleted if it may be one of the keys a {@link #startRange} watch counts (created up to
     * {@code maxCreateRevision}, existing at {@code readAt}); else null. etcd sends a deletion's previous key-value
     * ({@code prev_kv}) only when it can still read it: it leaves it out for a key whose revisions were compacted, and
     * on a 3-member cluster under load it was seen left out with no compaction at all. A deletion without it may be one
     * of ours, so it counts: a wake-up too many costs the waiter a read, a missed one its wait.
     */
    static String countedDeletion(WatchEvent event, long maxCreateRevision, long readAt) {
        if (event.getEventType() != WatchEvent.EventType.DELETE
                || event.getKeyValue().getModRevision() <= readAt
                || event.getPrevKV().getCreateRevision() > maxCreateRevision) {
            return null;
        }
        String key = text(event.getKeyValue().getKey());
        if (event.getPrevKV().getCreateRevision() == 0) {
            log.debug(
                    "The deletion of {} at revision {} came without its previous key-value; counted",
                    key,
                    event.getKeyValue().getModRevision());
        }
        return key;
    }

    /**
     * Watches the deletions in a queue's directory for a waiter near its head: {@code ahead}'s keys, and the waiter's
     * own key {@code ownKey} (created at {@code ownRevision}), all existed at store revision {@code readAt}, and no other
     * key can come ahead. One watch delivers the directory's deletions in revision order, so when the last key ahead
     * is deleted before the waiter's own key, the waiter is first at that revision: {@code onGranted} gets it, with no
     * read of the queue. {@code onLookAgain} is called instead when the own key goes first (the caller reads the queue,
     * which tells an expired session from a key deleted by someone), and {@code onEnded} on a failure of the watch or
     * of its check. At most one of them, once.
     *
     * <p>As {@link #start}, a store that moved on before the watch started is checked once: one transaction reads every
     * key of the set, and what it finds gone (or there again with another create revision: a session queueing again)
     * counts as deleted. No grant is told before that check has answered: until then the own key's fate between the
     * read and the watch's start is not known.
     */
    static Watch.Watcher startNearHead(
            EtcdCalls calls,
            String dir,
            String rangeEnd,
            List<FairQueue.OneKey> ahead,
            String ownKey,
            long ownRevision,
            long readAt,
            Supplier<Deadline> checkDeadline,
            LongConsumer onGranted,
            Runnable onLookAgain,
            Consumer<Throwable> onEnded) {
        NearHead head = new NearHead(ahead, ownKey, ownRevision, onGranted, onLookAgain, onEnded);
        return calls.watchRangeDeletesFromNow(
                dir,
                rangeEnd,
                (WatchResponse response) -> {
                    if (!response.isCreatedNotify()) {
                        head.deleted(response.getEvents());
                    } else if (response.getHeader().getRevision() > readAt) {
                        head.check(calls, checkDeadline.get());
                    } else {
                        head.checked(null, 0);
                    }
                },
                onEnded);
    }

    /** What {@link #startNearHead} knows: the keys still ahead, whether the check answered, whether it has told. */
    private static final class NearHead {
        private final Map<String, Long> ahead = new HashMap<>(); // guarded by this
        private final String ownKey;
        private final long ownRevision;
        private final LongConsumer onGranted;
        private final Runnable onLookAgain;
        private final Consumer<Throwable> onEnded;
        private boolean checked; // guarded by this
        private boolean told; // guarded by this

        NearHead(
                List<FairQueue.OneKey> keys,
                String ownKey,
                long ownRevision,
                LongConsumer onGranted,
                Runnable onLookAgain,
                Consumer<Throwable> onEnded) {
            keys.forEach(k -> ahead.put(k.key(), k.createRevision()));
            this.ownKey = ownKey;
            this.ownRevision = ownRevision;
            this.onGranted = onGranted;
            this.onLookAgain = onLookAgain;
            this.onEnded = onEnded;
        }

        /** One watch response's deletions, in order. */
        void deleted(List<WatchEvent> events) {
            decide(() -> {
                for (WatchEvent event : events) {
                    if (event.getEventType() != WatchEvent.EventType.DELETE) {
                        continue;
                    }
                    String key = text(event.getKeyValue().getKey());
                    long at = event.getKeyValue().getModRevision();
                    // A member behind the one that answered the read may start the watch before readAt and show an
                    // earlier key of the same name going: only a deletion after the key's creation counts.
                    if (key.equals(ownKey) && at > ownRevision) {
                        return tell(onLookAgain);
                    }
                    if (at > ahead.getOrDefault(key, Long.MAX_VALUE)) {
                        ahead.remove(key);
                        Runnable granted = grantedAt(at);
                        if (granted != null) {
                            return granted;
                        }
                    }
                }
                return null;
            });
        }

        /** Sends the check: the keys ahead and the own key, read in one transaction. */
        void check(EtcdCalls calls, Deadline deadline) {
            List<String> keys;
            synchronized (this) {
                keys = new ArrayList<>(ahead.keySet());
            }
            keys.add(ownKey);
            calls.txn(
                            "checking the keys ahead of " + ownKey,
                            txn -> txn.Then(keys.stream()
                                    .map(k -> Op.get(bytes(k), GetOption.DEFAULT))
                                    .toArray(Op[]::new)),
                            deadline)
                    .whenComplete((response, failure) -> {
                        if (failure != null) {
                            decide(() -> tell(() -> onEnded.accept(failure)));
                            return;
                        }
                        Map<String, Long> found = new HashMap<>();
                        response.getGetResponses().forEach(r -> r.getKvs()
                                .forEach(kv -> found.put(text(kv.getKey()), kv.getCreateRevision())));
                        checked(found, response.getHeader().getRevision());
                    });
        }

        /**
         * The check answered, with the create revisions of the keys it found at store revision {@code at} (null: no
         * check was needed, the watch started at the read's revision).
         */
        void checked(Map<String, Long> found, long at) {
            decide(() -> {
                checked = true;
                if (found == null) {
                    return null; // nothing was deleted before the creation notice: nothing to grant on yet
                }
                if (found.getOrDefault(ownKey, 0L) != ownRevision) {
                    return tell(onLookAgain);
                }
                ahead.entrySet().removeIf(k -> !k.getValue().equals(found.get(k.getKey())));
                return grantedAt(at);
            });
        }

        /** Runs {@code step} under this object's lock, then what it decided to tell (if anything) outside it. */
        private void decide(Supplier<Runnable> step) {
            Runnable outcome;
            synchronized (this) {
                outcome = step.get();
            }
            if (outcome != null) {
                outcome.run();
            }
        }

        /** The grant at store revision {@code at} if nothing is ahead any more and the check has answered; else null. */
        private Runnable grantedAt(long at) {
            return checked && ahead.isEmpty() ? tell(() -> onGranted.accept(at)) : null;
        }

        /** {@code outcome} if nothing was told yet (and from now on, nothing else will be); else null. */
        private Runnable tell(Runnable outcome) {
            if (told) {
                return null;
            }
            told = true;
            return outcome;
        }
    }

    /** How many keys from {@code key} to {@code rangeEnd} have a create revision up to {@code maxCreateRevision}. */
    private static CompletableFuture<Long> countIn(
            EtcdCalls calls, String key, String rangeEnd, long maxCreateRevision, Deadline deadline) {
        return calls.txn(
                        "counting the keys in " + key,
                        txn -> txn.Then(Op.get(
                                bytes(key),
                                GetOption.builder()
                                        .withRange(bytes(rangeEnd))
                                        .withMaxCreateRevision(maxCreateRevision)
                                        .withKeysOnly(true)
                                        .build())),
                        deadline)
                // the keys, not the count: etcd counts the whole range, before the create revision filters it
                .thenApply(response ->
                        (long) response.getGetResponses().get(0).getKvs().size());
    }

    /** One transaction: does {@code key} still exist with {@code createRevision}? */
    static CompletableFuture<Boolean> isStillThere(
            EtcdCalls calls, String key, long createRevision, Deadline deadline) {
        return versionIfStillThere(calls, key, createRevision, deadline).thenApply(OptionalLong::isPresent);
    }

    /** One transaction: the version of {@code key} if it still exists with {@code createRevision}, else empty. */
    static CompletableFuture<OptionalLong> versionIfStillThere(
            EtcdCalls calls, String key, long createRevision, Deadline deadline) {
        return calls.txn(
                        "checking that " + key + " still exists",
                        // The read makes etcd serve the transaction linearizably: one with no operations counts as
                        // serializable and is answered by whichever member got it, perhaps one that lags behind.
                        txn -> txn.If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                                .Then(Op.get(bytes(key), GetOption.DEFAULT))
                                .Else(Op.get(bytes(key), GetOption.DEFAULT)),
                        deadline)
                .thenApply(response -> {
                    if (!response.isSucceeded()) {
                        return OptionalLong.empty();
                    }
                    List<KeyValue> read = response.getGetResponses().get(0).getKvs(); // mapped anew at every call
                    return read.isEmpty()
                            ? OptionalLong.empty()
                            : OptionalLong.of(read.get(0).getVersion());
                });
    }
}
