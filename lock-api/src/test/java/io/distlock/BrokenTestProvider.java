package io.distlock;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.Set;

/** A provider that cannot even be constructed, listed in the test resources to prove discovery skips it. */
public final class BrokenTestProvider implements LockBackendProvider {

    public BrokenTestProvider() {
        throw new IllegalStateException("deliberately broken provider");
    }

    @Override
    public String name() {
        return "broken";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("broken");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        throw new UnsupportedOperationException();
    }
}
