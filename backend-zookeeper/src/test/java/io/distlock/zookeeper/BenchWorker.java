package io.distlock.zookeeper;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.io.PrintStream;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

/**
 * One worker process of {@link ZooKeeperBenchmark}'s contended run: takes one lock {@code n} times with an empty
 * critical section, starting at an agreed wall-clock instant, and prints one {@code RESULT} line for the parent.
 *
 * <p>Arguments: {@code distlock|spi|curator connectString path n startEpochMillis}.
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
        } else if (impl.equals("spi")) {
            String base = path.substring(0, path.lastIndexOf('/'));
            String key = KeyCodec.decode(path.substring(path.lastIndexOf('/') + 1));
            try (LockBackend backend = new ZooKeeperLockBackendProvider()
                    .open(new BackendConfig(
                            URI.create("zk://" + connect + base),
                            Map.of("sessionTimeout", "30s"),
                            Duration.ofSeconds(30),
                            Duration.ofSeconds(10),
                            Ticker.system(),
                            Clock.systemUTC()))) {
                sleepUntil(startAt);
                first = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long t0 = System.nanoTime();
                    LockRequest request = new LockRequest(key, "bench-" + i, Duration.ofSeconds(30), reason -> {});
                    Lease lease = backend.acquire(request, Deadline.after(Duration.ofMinutes(2), Ticker.system()))
                            .orElseThrow();
                    waits[i] = System.nanoTime() - t0;
                    backend.release(lease);
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
