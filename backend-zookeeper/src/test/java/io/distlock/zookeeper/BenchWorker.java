package io.distlock.zookeeper;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

/**
 * One worker process of {@link ZooKeeperBenchmark}'s contended run: takes one lock {@code n} times with an empty
 * critical section, starting at an agreed wall-clock instant, and prints one {@code RESULT} line for the parent.
 *
 * <p>Arguments: {@code distlock|curator connectString path n startEpochMillis}.
 */
final class BenchWorker {

    private BenchWorker() {}

    /** The worker's entry point; its report goes to standard output, which the parent reads. */
    public static void main(String[] args) throws Exception {
        String impl = args[0];
        String connect = args[1];
        String path = args[2];
        int n = Integer.parseInt(args[3]);
        long startAt = Long.parseLong(args[4]);
        PrintStream out = System.out;
        long[] waits = new long[n];
        long first;
        long last;
        if (impl.equals("distlock")) {
            String base = path.substring(0, path.lastIndexOf('/'));
            String key = KeyCodec.decode(path.substring(path.lastIndexOf('/') + 1));
            try (RemoteLocker locker = RemoteLockers.open("zk://" + connect + base + "?sessionTimeout=30s")) {
                locker.tryLock("warm-up-" + ProcessHandle.current().pid()).ifPresent(RemoteLock::close);
                sleepUntil(startAt);
                first = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long t0 = System.nanoTime();
                    RemoteLock lock = locker.lock(key, Duration.ofMinutes(2));
                    waits[i] = System.nanoTime() - t0;
                    lock.close();
                }
                last = System.nanoTime();
            }
        } else {
            try (CuratorFramework client =
                    CuratorFrameworkFactory.newClient(connect, 30_000, 10_000, new RetryOneTime(100))) {
                client.start();
                client.blockUntilConnected();
                InterProcessMutex mutex = new InterProcessMutex(client, path);
                sleepUntil(startAt);
                first = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long t0 = System.nanoTime();
                    if (!mutex.acquire(2, TimeUnit.MINUTES)) {
                        throw new IllegalStateException("Curator mutex not acquired in 2 minutes");
                    }
                    waits[i] = System.nanoTime() - t0;
                    mutex.release();
                }
                last = System.nanoTime();
            }
        }
        long sum = 0;
        long max = 0;
        for (long w : waits) {
            sum += w;
            max = Math.max(max, w);
        }
        out.println("RESULT " + n + " " + sum + " " + max + " " + (last - first));
        out.flush();
    }

    private static void sleepUntil(long epochMillis) throws InterruptedException {
        long left = epochMillis - System.currentTimeMillis();
        if (left > 0) {
            Thread.sleep(left);
        }
    }
}
