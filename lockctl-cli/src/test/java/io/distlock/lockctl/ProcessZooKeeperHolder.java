package io.distlock.lockctl;

/**
 * A JVM that starts a {@link ProcessZooKeeper}, prints the server's pid and directory on one line, and waits to be
 * killed: for {@code ProcessZooKeeperTest}'s lockctl that dies without closing its server.
 */
public final class ProcessZooKeeperHolder {

    private ProcessZooKeeperHolder() {}

    /** Starts the server, prints {@code <pid> <directory>} and sleeps until killed. */
    public static void main(String[] args) throws Exception {
        ProcessZooKeeper server = ProcessZooKeeper.start();
        System.out.println(server.handle().pid() + " " + server.directory());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
