package io.distlock.cassandra;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.toolkit.PollingAcquisition;
import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A wait of either algorithm ({@link QueueAcquisition}, {@link LegacyAcquisition}) on lock-api's {@link PollingAcquisition}: each
 * attempt is an asynchronous chain of driver requests, and no thread is parked between attempts. A store that fails an
 * attempt is attempted again after the shared back-off, until it has failed every attempt for the {@code
 * connectTimeout} (an outage: no node, or too few replicas alive) or until the deadline (a coordinator that answered
 * "a replica timed out" is reachable: the cluster is still noticing a dead node), which then ends the wait with its
 * last failure.
 */
abstract class CassandraAcquisition extends PollingAcquisition<CassandraLease> {

    private static final Logger LOG = LoggerFactory.getLogger(CassandraAcquisition.class);

    private final String key;
    private final Duration cleanUpBound;

    CassandraAcquisition(
            String key,
            String wakeKey,
            CassandraCalls calls,
            WakeUps wakeUps,
            ScheduledExecutorService timers,
            Deadline deadline,
            Duration outageLimit) {
        super(key, deadline, outageLimit, timers, wakeUps, wakeKey, Runnable::run);
        this.key = key;
        // An interrupted wait's clean-up: an attempt in flight answers, then the withdrawal's requests.
        this.cleanUpBound = calls.timeout().multipliedBy(3).plusSeconds(1);
    }

    /** The timer thread on which an algorithm's waits are attempted again. */
    static ScheduledExecutorService newTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-cassandra-poll");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true); // a woken waiter cancels its timer
        return timer;
    }

    /**
     * One attempt of the algorithm, without blocking. A stage failing with a {@link LockBackendException} is the
     * store's failure, attempted again; any other failure ends the wait.
     */
    protected abstract CompletionStage<Step<CassandraLease>> poll();

    @Override
    protected final CompletionStage<Step<CassandraLease>> attempt() {
        CompletionStage<Step<CassandraLease>> polled;
        try {
            polled = poll();
        } catch (RuntimeException e) {
            polled = CompletableFuture.failedFuture(e);
        }
        return polled.exceptionally(this::storeFailed);
    }

    private Step<CassandraLease> storeFailed(Throwable error) {
        RuntimeException failure = CassandraCalls.unwrap(error);
        if (!(failure instanceof LockBackendException storeFailure)) {
            throw failure; // a bug, not the store: ends the wait
        }
        LOG.debug("Waiting for lock '{}': {}", key, storeFailure.toString());
        LockBackendException acquireFailure = new LockBackendException(
                "Could not acquire lock '" + key + "': Cassandra failed every attempt (last: "
                        + storeFailure.getMessage() + ")",
                storeFailure);
        return CassandraCalls.isReplicaTimeout(storeFailure)
                ? Step.storeStalled(acquireFailure)
                : Step.storeFailed(acquireFailure);
    }

    /** Starts the wait and waits for it on the calling thread; see {@link PollingAcquisition#await}. */
    final Optional<CassandraLease> awaitHere() throws InterruptedException {
        return start().await(cleanUpBound);
    }
}
