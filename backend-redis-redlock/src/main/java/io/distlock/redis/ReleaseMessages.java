package io.distlock.redis;

import io.distlock.spi.WakeUps;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Push wake-up: every release publishes the freed key on one channel per master ({@code <prefix>released}); this
 * listens on that channel through one pub/sub connection per master (opened with the backend, in the
 * background), however many keys are waited on, and wakes the local waiters ({@link WakeUps}) of the key named in
 * each message.
 *
 * <p>One channel for all keys means no subscribe and unsubscribe per wait (the races and leaked subscriptions of
 * per-lock channels), at the cost of every locker hearing every release of its prefix; a message for a key nobody
 * here waits on is one map lookup. Messages can be lost (a master restarting, a reconnecting subscriber), so every
 * waiter also polls on a timer.
 */
final class ReleaseMessages {

    private final List<Master> masters;
    private final String channel;
    private final int majority;
    private final WakeUps wakeUps;

    ReleaseMessages(List<Master> masters, String channel, int majority, WakeUps wakeUps) {
        this.masters = masters;
        this.channel = channel;
        this.majority = majority;
        this.wakeUps = wakeUps;
    }

    /**
     * Subscribes on every master not yet subscribed (the first wait, or after a failed subscription). Completes when
     * a majority is subscribed (a release deletes on a majority, so it publishes on at least one of them) or when
     * every subscription has settled.
     */
    CompletableFuture<Void> subscribed() {
        List<CompletableFuture<Void>> subs = new ArrayList<>(masters.size());
        for (Master m : masters) {
            subs.add(m.subscribe(channel, this::released));
        }
        CompletableFuture<Void> ready = new CompletableFuture<>();
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger settled = new AtomicInteger();
        for (CompletableFuture<Void> s : subs) {
            s.whenComplete((v, e) -> {
                if (e == null && ok.incrementAndGet() >= majority) {
                    ready.complete(null);
                }
                if (settled.incrementAndGet() == subs.size()) {
                    ready.complete(null);
                }
            });
        }
        return ready;
    }

    private void released(String redisKey) {
        wakeUps.wake(redisKey);
    }
}
