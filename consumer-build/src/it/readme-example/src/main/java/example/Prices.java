package example;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import java.time.Duration;

public class Prices {

    public static void main(String[] args) throws InterruptedException {
        String uri = args.length > 0 ? args[0] : "zk://10.0.0.1:2181,10.0.0.2:2181/locks";
        try (RemoteLocker locker = RemoteLockers.open(uri)) {
            RemoteReadWriteLock prices = locker.readWriteLock("prices");
            // Readers share the read side: any number at once, never beside a writer.
            try (RemoteLock read = prices.readLock().lock(Duration.ofSeconds(10))) {
                System.out.println("quote from the price list, token " + read.fencingToken());
            }
            // A writer holds the write side alone. To write what you read, release the read side first: a read lock
            // is never upgraded in place (two readers waiting to upgrade would wait for each other for ever).
            try (RemoteLock write = prices.writeLock().lock(Duration.ofSeconds(10))) {
                System.out.println("publish the new price list, token " + write.fencingToken());
            }
        }
    }
}
