package io.distlock;

/** {@link LockObserver#none()}. */
final class NoObserver implements LockObserver, LockObserver.Acquisition, LockObserver.Hold {

    static final NoObserver INSTANCE = new NoObserver();

    private NoObserver() {}

    @Override
    public Acquisition acquisitionStarted(String scheme, String key, Kind kind) {
        return this;
    }

    @Override
    public Hold granted(RemoteLock lock) {
        return this;
    }

    @Override
    public void ended(Outcome outcome, Throwable failure) {}
}
