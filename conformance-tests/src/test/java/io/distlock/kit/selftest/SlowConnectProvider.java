package io.distlock.kit.selftest;

import io.distlock.LockBackendException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;

/**
 * Broken: connecting to the host {@code unreachable} ignores the connect timeout and tries for ten times as long
 * before it gives up.
 */
public final class SlowConnectProvider extends BrokenProvider {

    /** For the service loader. */
    public SlowConnectProvider() {
        super("broken-slowconnect");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        if ("unreachable".equals(config.uri().getHost())) {
            correct.close();
            try {
                Thread.sleep(config.connectTimeout().multipliedBy(10).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new LockBackendException("Cannot reach " + config.uri());
        }
        return correct;
    }
}
