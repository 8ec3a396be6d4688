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
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

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
     * them is deleted, after giving {@code deletedKey} the key deleted (null when the check found it gone). As {@link #start}, a store that moved on before the watch started is checked once: fewer such
     * keys than {@code count} means one was deleted meanwhile (no such key can be created any more).
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
                        if (event.getEventType() == WatchEvent.EventType.DELETE
                                && event.getPrevKV().getCreateRevision() > 0
                                && event.getPrevKV().getCreateRevision() <= maxCreateRevision
                                && event.getKeyValue().getModRevision() > readAt) {
                            deleted.accept(text(event.getPrevKV().getKey()));
                            return;
                        }
                    }
                },
                onEnded);
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
