package io.distlock.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import io.distlock.RemoteSemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Read-write locks and semaphores on {@code memory:}: the grant rule, the spaces apart, and what is refused. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class SharedKindsTest {

    private RemoteLocker one;
    private RemoteLocker other;

    @BeforeEach
    void open() {
        String space = "memory:/shared-kinds-" + UUID.randomUUID();
        one = RemoteLockers.open(space);
        other = RemoteLockers.open(space);
    }

    @AfterEach
    void close() {
        one.close();
        other.close();
    }

    @Test
    void readers_share_andAWriter_excludesEveryone() throws Exception {
        RemoteReadWriteLock mine = one.readWriteLock("k");
        RemoteReadWriteLock theirs = other.readWriteLock("k");
        RemoteLock read = mine.readLock().tryLock().orElseThrow();
        RemoteLock alsoRead = theirs.readLock().tryLock().orElseThrow();
        assertThat(read.kind()).isEqualTo(LockKind.READ);
        // asynchronous: this thread holds the read side through both lockers, and would be refused the write side
        assertThat(theirs.writeLock().tryLockAsync().get(10, TimeUnit.SECONDS))
                .as("a writer beside readers")
                .isEmpty();
        read.release();
        alsoRead.release();
        RemoteLock write = theirs.writeLock().tryLock().orElseThrow();
        assertThat(write.kind()).isEqualTo(LockKind.WRITE);
        assertThat(mine.readLock().tryLock()).as("a reader beside a writer").isEmpty();
        assertThat(mine.writeLock().tryLock()).as("a writer beside a writer").isEmpty();
        write.release();
    }

    @Test
    void theLock_theReadWriteLock_andTheSemaphore_onOneKey_areApart() {
        try (RemoteLock lock = one.tryLock("k").orElseThrow();
                RemoteLock write =
                        other.readWriteLock("k").writeLock().tryLock().orElseThrow();
                RemoteLock permit = other.semaphore("k", 1).tryLock().orElseThrow()) {
            assertThat(List.of(lock.kind(), write.kind(), permit.kind()))
                    .containsExactly(LockKind.LOCK, LockKind.WRITE, LockKind.PERMIT);
        }
    }

    @Test
    void aWaitingWriter_isServedBefore_laterReaders() throws Exception {
        RemoteLock reader = one.readWriteLock("k").readLock().lock();
        CompletableFuture<RemoteLock> writer =
                other.readWriteLock("k").writeLock().lockAsync(Duration.ofSeconds(30));
        assertThat(other.readWriteLock("k").readLock().tryLock())
                .as("a reader that comes after a waiting writer")
                .isEmpty();
        CompletableFuture<RemoteLock> laterReader =
                other.readWriteLock("k").readLock().lockAsync(Duration.ofSeconds(30));
        reader.release();
        RemoteLock write = writer.get(10, TimeUnit.SECONDS);
        assertThat(laterReader).isNotDone();
        write.release();
        laterReader.get(10, TimeUnit.SECONDS).release();
    }

    @Test
    void aSemaphore_grantsNPermits_andNoMore_andAReleaseLetsTheNextIn() throws Exception {
        RemoteSemaphore three = one.semaphore("s", 3);
        List<RemoteLock> permits = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RemoteLocker locker = i % 2 == 0 ? one : other;
            permits.add(locker.semaphore("s", 3)
                    .tryLockAsync()
                    .get(10, TimeUnit.SECONDS)
                    .orElseThrow());
        }
        assertThat(three.tryLock()).as("a fourth permit of three").isEmpty();
        CompletableFuture<RemoteLock> waiting = other.semaphore("s", 3).lockAsync(Duration.ofSeconds(30));
        permits.get(1).release();
        waiting.get(10, TimeUnit.SECONDS).release();
        permits.forEach(RemoteLock::release);
    }

    @Test
    void aPermitWhoseLeaseRanOut_isFreed() throws Exception {
        RemoteSemaphore single = one.semaphore("s", 1);
        single.tryLockFor(Duration.ofMillis(200)).orElseThrow();
        assertThat(other.semaphore("s", 1).lock(Duration.ofSeconds(10)).isHeld())
                .isTrue();
    }

    @Test
    void aSemaphoreAskedWithAnotherN_isRefused_namingBoth() {
        try (RemoteLock permit = one.semaphore("s", 2).tryLock().orElseThrow()) {
            assertThatThrownBy(() -> other.semaphore("s", 3).tryLock())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("in use with 2 permits")
                    .hasMessageContaining("asks for it with 3");
            assertThat(permit.isHeld()).isTrue();
        }
        assertThat(other.semaphore("s", 3).tryLock()).as("free again: any N").isPresent();
    }

    @Test
    void aThreadHoldingTheReadSide_isRefusedTheWriteSide_notAnUpgrade() throws Exception {
        RemoteReadWriteLock rw = one.readWriteLock("k");
        try (RemoteLock read = rw.readLock().lock()) {
            assertThatThrownBy(() -> rw.writeLock().lock(Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("read side of read-write lock 'k'")
                    .hasMessageContaining("not upgraded");
            assertThat(one.tryLock("k"))
                    .as("the lock on the same key is another thing")
                    .isPresent();
        }
    }

    @Test
    void badInput_isRefused() {
        assertThatThrownBy(() -> one.semaphore("s", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits must be at least 1, got 0");
        assertThatThrownBy(() -> one.readWriteLock(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> one.semaphore("s", 1).lock(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxWait");
        RemoteLock read = one.readWriteLock("k").readLock().tryLock().orElseThrow();
        read.release();
        assertThat(read.release()).as("a read lock released twice").isEqualTo(ReleaseResult.ALREADY_RELEASED);
        one.close();
        assertThatThrownBy(() -> one.readWriteLock("k")).hasMessageContaining("closed");
    }

    @Test
    void theCapabilities_nameTheKinds() {
        assertThat(one.capabilities().kinds())
                .containsExactly(LockKind.LOCK, LockKind.READ, LockKind.WRITE, LockKind.PERMIT);
    }
}
