package example;

import io.distlock.Candidacy;
import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Term;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public class Leaders {

    public static void main(String[] args) throws Exception {
        String uri = args.length > 0 ? args[0] : "zk://10.0.0.1:2181,10.0.0.2:2181/locks";
        String me = "10.0.0.7:8080"; // what followers need to reach this process
        ExecutorService listenerThread = Executors.newSingleThreadExecutor();
        try (RemoteLocker locker = RemoteLockers.open(uri)) {
            // The lock on "%election/billing-scheduler": apart from the lock on "billing-scheduler".
            LeaderElection election = locker.election("billing-scheduler");
            // Join: returns at once. The listener is told on listenerThread, one call at a time, in order.
            Candidacy candidacy = election.join(
                    me,
                    LeadershipListener.of(
                            term -> System.out.println("leading, epoch " + term.epoch()),
                            (term, reason) -> System.out.println("no longer leading: " + reason)),
                    listenerThread);
            // Or block, at most a minute.
            if (candidacy.awaitLeadership(Duration.ofMinutes(1))) {
                Term term = candidacy.currentTerm().orElseThrow();
                // The epoch grows with every new leader (empty where the store has no fencing: Redis).
                // A resource that refuses epochs below the last it saw refuses a deposed leader's late writes.
                System.out.println("write the ledger with epoch " + term.epoch());
            }
            // Anyone, candidate or not: who leads now, read from the store, and every change (polled every second).
            Optional<Leader> now = election.leader();
            System.out.println("leader: " + now.map(Leader::identity).orElse("nobody"));
            try (LeaderElection.Subscription changes =
                    election.observe(leader -> System.out.println("leader now: " + leader))) {
                candidacy.stepDown(); // end this term and queue again
                candidacy.close(); // leave: the next candidate leads at once
            }
        } finally {
            listenerThread.shutdown();
        }
    }
}
