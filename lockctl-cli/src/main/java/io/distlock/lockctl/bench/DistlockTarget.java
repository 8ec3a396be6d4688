package io.distlock.lockctl.bench;

import io.distlock.Candidacy;
import io.distlock.LeadershipListener;
import io.distlock.LockKind;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.OptionalLong;
import java.util.Set;

/** A distlock lock URI: the whole locker, as an application uses it, with the backend's request counter. */
final class DistlockTarget implements BenchTarget {

    private final RemoteLocker locker;
    private final CountingProvider provider;

    DistlockTarget(String uri) {
        int colon = uri.indexOf(':');
        if (colon <= 0) {
            // not a URI at all: let the library say what is wrong with it
            RemoteLockers.open(uri).close();
        }
        this.provider = new CountingProvider(
                RemoteLockers.provider(uri.substring(0, colon).trim()));
        this.locker = RemoteLockers.builder().uri(uri).provider(provider).build();
    }

    @Override
    public Held acquire(String key) throws InterruptedException {
        RemoteLock lock = locker.lock(key);
        return lock::close;
    }

    /** The lock, either side of the read-write lock or a permit of the semaphore on {@code key}, as a user takes it. */
    @Override
    public Held acquire(String key, LockKind kind, int permits) throws InterruptedException {
        RemoteLock lock = hold(key, kind, permits);
        return lock::close;
    }

    /** A candidate of the locker's election {@code election}: stepping down queues it again behind the others. */
    @Override
    public Candidate join(String election, String identity, Runnable elected) {
        Candidacy candidacy = locker.election(election)
                .join(identity, LeadershipListener.of(term -> elected.run(), (term, why) -> {}));
        return candidacy::stepDown;
    }

    /** One soft attempt on {@code key}: the held lock, or null when another holds it. */
    Held tryAcquire(String key) {
        return locker.tryLock(key).<Held>map(lock -> lock::close).orElse(null);
    }

    /** Takes {@code kind} on {@code key} and keeps it. */
    RemoteLock hold(String key, LockKind kind, int permits) throws InterruptedException {
        return switch (kind) {
            case LOCK -> locker.lock(key);
            case READ -> locker.readWriteLock(key).readLock().lock();
            case WRITE -> locker.readWriteLock(key).writeLock().lock();
            case PERMIT -> locker.semaphore(key, permits).lock();
        };
    }

    @Override
    public OptionalLong storeRequests() {
        LockBackend backend = provider.opened;
        return backend == null ? OptionalLong.empty() : backend.storeRequests();
    }

    @Override
    public void close() {
        locker.close();
    }

    /** The discovered provider, remembering the backend it opened so that its request counter can be read. */
    private static final class CountingProvider implements LockBackendProvider {
        private final LockBackendProvider real;
        private volatile LockBackend opened;

        CountingProvider(LockBackendProvider real) {
            this.real = real;
        }

        @Override
        public String name() {
            return real.name();
        }

        @Override
        public Set<String> uriSchemes() {
            return real.uriSchemes();
        }

        @Override
        public LockBackend open(BackendConfig config) {
            LockBackend backend = real.open(config);
            opened = backend;
            return backend;
        }
    }
}
