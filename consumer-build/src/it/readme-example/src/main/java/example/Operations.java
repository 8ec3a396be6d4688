package example;

import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;

public class Operations {

    public static void main(String[] args) throws InterruptedException {
        String uri = args.length > 0 ? args[0] : "zk://10.0.0.1:2181,10.0.0.2:2181/locks";
        // Say who this locker is: the label is stored with every entry it writes (default: pid@host).
        try (RemoteLocker billing = RemoteLockers.builder().uri(uri).ownerLabel("billing-7 10.0.0.7:8080").build();
                RemoteLocker operator = RemoteLockers.open(uri)) {
            RemoteLock stuck = billing.lock("ledger");
            // Any process asks the store itself who holds a key, since when, until when, with which token:
            LockState ledger = operator.inspect("ledger");
            for (LockHolder holder : ledger.holders()) {
                System.out.println(holder.kind().label() + " held by " + holder.ownerLabel()
                        + ", since " + holder.since().map(Object::toString).orElse("(not kept)")
                        + ", lease ends " + holder.leaseEnds().map(Object::toString).orElse("with its session")
                        + ", token " + holder.fencingToken());
            }
            // Every held key under the namespace: a scan of the store, whose cost each backend's page gives.
            for (LockState held : operator.listHeld()) {
                System.out.println(held.key() + ": " + held.holders().size() + " holder(s)");
            }
            // Ask the holder to let go: its listener runs (once per request) and the holder decides.
            stuck.onReleaseRequested(lock -> System.out.println("asked to let go of " + lock.key()));
            for (LockHolder asked : operator.requestRelease("ledger")) {
                System.out.println("asked " + asked.ownerLabel() + " to let go");
            }
            // A stuck holder's lock broken as an administrator would: its holder is told (onLost), a waiter served.
            for (LockHolder broken : operator.breakLock("ledger")) {
                System.out.println("broke the " + broken.kind().label() + " of " + broken.ownerLabel());
            }
            stuck.close(); // already lost: the release answers ALREADY_LOST
        }
    }
}
