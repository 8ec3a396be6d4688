package io.distlock.testing;

/**
 * A node the fixture does not run as a process (an address from the environment, a container): only its proxy can be
 * faulted; every process fault throws {@link UnsupportedOperationException} with the reason.
 */
final class UnmanagedNode implements ServerNode {

    private final String name;
    private final String endpoint;
    private final ServerSource source;
    private final String why;
    private final TcpProxy proxy;

    /**
     * @param why completes "stop() on ... is unavailable: ...", e.g. "the server is given by DISTLOCK_REDIS_ADDRESSES,
     *     the fixture does not run it; unset the variable to let the fixture run its own"
     */
    UnmanagedNode(String name, String endpoint, ServerSource source, String why, TcpProxy proxy) {
        this.name = name;
        this.endpoint = endpoint;
        this.source = source;
        this.why = why;
        this.proxy = proxy;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    @Override
    public TcpProxy proxy() {
        return proxy;
    }

    @Override
    public ServerSource source() {
        return source;
    }

    @Override
    public boolean isRunning() {
        return true;
    }

    @Override
    public void stop() {
        throw unsupported("stop");
    }

    @Override
    public void kill9() {
        throw unsupported("kill9");
    }

    @Override
    public void restart() {
        throw unsupported("restart");
    }

    @Override
    public void pause() {
        throw unsupported("pause");
    }

    @Override
    public void resume() {
        throw unsupported("resume");
    }

    private UnsupportedOperationException unsupported(String fault) {
        return new UnsupportedOperationException(fault + "() on " + name + " (" + endpoint + ") is unavailable: " + why
                + ". Only proxy faults (partition, disconnect, heal) work on it.");
    }

    @Override
    public String toString() {
        return name + "@" + endpoint + " (" + source + ", proxy " + proxy.endpoint() + ")";
    }
}
