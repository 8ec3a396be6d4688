package io.distlock.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.OwnerIds;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The owner label and inspection on {@code memory:}, where they need no store: the builder's checks, what a look-up
 * shows, and what is refused. Every backend's inspection is checked against its store by the conformance kit.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class InspectionTest {

    private final String space = "memory:/inspection-" + UUID.randomUUID();

    @Test
    void aLabelledLocker_isShownAsTheHolder_toAnotherLocker() throws Exception {
        try (RemoteLocker labelled = RemoteLockers.builder()
                        .uri(space)
                        .ownerLabel("billing/7 on host-a")
                        .build();
                RemoteLocker other = RemoteLockers.open(space)) {
            assertThat(labelled.ownerLabel()).isEqualTo("billing/7 on host-a");
            assertThat(other.ownerLabel()).isEqualTo(OwnerIds.defaultLabel());
            try (RemoteLock lock = labelled.lock("k");
                    RemoteLock read = other.readWriteLock("k").readLock().lock()) {
                CompletableFuture<RemoteLock> waiter = other.lockAsync("k", java.time.Duration.ofSeconds(30));
                LockState state = other.inspect("k");
                assertThat(state.holders())
                        .extracting(LockHolder::kind, LockHolder::ownerLabel)
                        .containsExactly(
                                org.assertj.core.groups.Tuple.tuple(LockKind.LOCK, "billing/7 on host-a"),
                                org.assertj.core.groups.Tuple.tuple(LockKind.READ, OwnerIds.defaultLabel()));
                assertThat(state.holders().get(0).fencingToken()).isEqualTo(lock.fencingToken());
                assertThat(state.waiting()).hasValue(1);
                assertThat(other.listHeld()).extracting(LockState::key).containsExactly("k");
                waiter.cancel(false);
            }
            assertThat(other.inspect("k").held()).isFalse();
            assertThat(other.listHeld()).isEmpty();
        }
    }

    @Test
    void breakLock_deletesTheHolders_andServesTheWaiter() throws Exception {
        try (RemoteLocker holder = RemoteLockers.builder()
                        .uri(space)
                        .ownerLabel("stuck")
                        .leaseTime(java.time.Duration.ofMillis(300))
                        .build();
                RemoteLocker operator = RemoteLockers.open(space)) {
            RemoteLock lock = holder.lock("k");
            CompletableFuture<Void> lost = new CompletableFuture<>();
            lock.onLost(reason -> lost.complete(null));
            CompletableFuture<RemoteLock> next = operator.lockAsync("k", java.time.Duration.ofSeconds(30));
            List<LockHolder> broken = operator.breakLock("k");
            assertThat(broken).extracting(LockHolder::ownerLabel).containsExactly("stuck");
            next.get(10, TimeUnit.SECONDS).close();
            lost.get(10, TimeUnit.SECONDS);
            assertThat(lock.isHeld()).isFalse();
            assertThat(operator.breakLock("k")).isEmpty();
        }
    }

    @Test
    void badInput_isRefused_namingIt() {
        assertThatThrownBy(() -> RemoteLockers.builder().ownerLabel(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ownerLabel must not be blank");
        assertThatThrownBy(() -> RemoteLockers.builder().ownerLabel("a\tb"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control");
        RemoteLocker locker = RemoteLockers.open(space);
        assertThatThrownBy(() -> locker.inspect(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locker.breakLock(null)).isInstanceOf(NullPointerException.class);
        locker.close();
        assertThatThrownBy(() -> locker.inspect("k")).isInstanceOf(LockerClosedException.class);
        assertThatThrownBy(locker::listHeld).isInstanceOf(LockerClosedException.class);
        assertThatThrownBy(() -> locker.breakLock("k")).isInstanceOf(LockerClosedException.class);
    }

    @Test
    void aBackendWithoutTheOperations_refusesThem_namingWhatItOffers() {
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(space)
                .provider(new LockOnlyProvider())
                .build()) {
            assertThatThrownBy(() -> locker.inspect("k"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("offers no inspection");
            assertThatThrownBy(() -> locker.breakLock("k"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("offers no breaking a lock");
        }
    }
}
