package example;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

public class Transfers {

    public static void main(String[] args) throws InterruptedException {
        String uri = args.length > 0 ? args[0] : "zk://10.0.0.1:2181,10.0.0.2:2181/locks?ttl=30s";
        try (RemoteLocker locker = RemoteLockers.open(uri)) {
            // The mandatory lock: wait (at most 10 s) until it is yours.
            try (RemoteLock lock = locker.lock("account:42", Duration.ofSeconds(10))) {
                // Hand the fencing token to the guarded resource with every write. An Optional: always empty on
                // Redis and Redlock, which have no token (capabilities().fencing() is false there; see Fencing below).
                System.out.println("withdraw 150 from account 42, token " + lock.fencingToken());
            }
            // The soft lock: one attempt, never waits for the holder.
            Optional<RemoteLock> sms = locker.tryLock("sms:42");
            sms.ifPresent(lock -> {
                try (lock) {
                    System.out.println("send the SMS");
                }
            });
            // Several keys, all or nothing, in a global order (no deadlock), always released.
            locker.withLocks(List.of("account:1", "account:2"), Duration.ofSeconds(5), () -> {
                System.out.println("move 100 from account 1 to account 2");
            });
        }
    }
}
