package example;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteSemaphore;
import java.time.Duration;
import java.util.Optional;

public class Imports {

    public static void main(String[] args) throws InterruptedException {
        String uri = args.length > 0 ? args[0] : "zk://10.0.0.1:2181,10.0.0.2:2181/locks";
        try (RemoteLocker locker = RemoteLockers.open(uri)) {
            // At most 3 hosts import at once. Every host names the semaphore with the same 3.
            RemoteSemaphore imports = locker.semaphore("nightly-import", 3);
            // Wait (at most a minute) for a permit: a lease of its own, renewed while held, freed if this host dies.
            try (RemoteLock permit = imports.lock(Duration.ofMinutes(1))) {
                System.out.println("import a batch, one host of at most " + imports.permits());
            }
            // Or one attempt that never waits: skip this run if 3 hosts are importing already.
            Optional<RemoteLock> spare = imports.tryLock();
            spare.ifPresent(permit -> {
                try (permit) {
                    System.out.println("import the late files");
                }
            });
        }
    }
}
