package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Maintenance;
import io.etcd.jetcd.maintenance.AlarmMember;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An etcd whose database is full: its space quota reached, etcd raises its {@code NOSPACE} alarm and takes reads and
 * deletes only, until an operator compacts, defragments and disarms it. A lock service that lets etcd keep every
 * revision gets there (each lock and release writes two). A new lock, and a new locker, are refused at once, naming
 * the cause and the cure; locks already held stay held (keep-alives and the renewal's compare write nothing) and their
 * release works (a delete).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdFullDatabaseTest {

    /** Small enough to fill in a second; etcd keeps some of it for itself. */
    private static final long QUOTA_BYTES = 2L * 1024 * 1024;

    private static final ByteSequence FILLER = ByteSequence.from("/filler/", StandardCharsets.UTF_8);

    @RegisterExtension
    static final EtcdCluster ETCD =
            EtcdCluster.builder().quotaBackendBytes(QUOTA_BYTES).build();

    @Test
    void fullDatabase_refusesNewLocksNamingTheCure_keepsTheHeldOne_andLocksAgainOnceCleared() throws Exception {
        String uri = EtcdTesting.uri(ETCD, "/full");
        Duration leaseTime = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (Client client = Client.builder()
                        .endpoints(ETCD.clientEndpoints().toArray(String[]::new))
                        .build();
                RemoteLocker locker =
                        RemoteLockers.builder().uri(uri).leaseTime(leaseTime).build()) {
            RemoteLock held = locker.lock("held", TestTimeouts.scaled(Duration.ofSeconds(10)));
            fill(client);

            long asked = System.nanoTime();
            assertThatThrownBy(() -> locker.tryLock("other"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("lock 'other'")
                    .hasMessageContaining("etcd's database is full")
                    .hasMessageContaining("etcdctl alarm disarm")
                    .hasMessageContaining("--auto-compaction-retention");
            assertThatThrownBy(() -> RemoteLockers.open(uri))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Could not open a session")
                    .hasMessageContaining("etcd's database is full")
                    .hasMessageNotContaining("connectTimeout") // an answer, not a wait: no hint at a slow network
                    .hasMessageNotContaining("reachable");
            assertThat(Duration.ofNanos(System.nanoTime() - asked))
                    .as("refused at once, not after a timeout")
                    .isLessThan(TestTimeouts.scaled(Duration.ofSeconds(5)));

            Thread.sleep(leaseTime.toMillis()); // a whole lease time of renewals on the full database

            // A put that etcd refused was answered: an attempt's clean-up need not wait for a lost reply, nor call
            // etcd silent (it did, with a delete given no time: "No answer from etcd within 0s")
            assertThat(refusedPutAnswered(client))
                    .as("a refusal is etcd's answer")
                    .isTrue();

            assertThat(held.isHeld()).as("renewed while etcd is full").isTrue();
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);

            // What the message tells an operator to do (etcdctl compaction, defrag, alarm disarm: here through jetcd's
            // calls for the same), once the data itself is gone (a delete is still taken)
            long deletedAt = client.getKVClient()
                    .delete(FILLER, DeleteOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            client.getKVClient().compact(deletedAt).get(10, TimeUnit.SECONDS);
            Maintenance maintenance = client.getMaintenanceClient();
            maintenance.defragmentMember(ETCD.clientEndpoints().get(0)).get(30, TimeUnit.SECONDS);
            for (AlarmMember alarm :
                    maintenance.listAlarms().get(10, TimeUnit.SECONDS).getAlarms()) {
                maintenance.alarmDisarm(alarm).get(10, TimeUnit.SECONDS);
            }
            locker.tryLock("other").orElseThrow().release();
        }
    }

    /** Whether a put that the full etcd refuses counts as answered ({@link EtcdCalls.Write#anySendAnswered()}). */
    private static boolean refusedPutAnswered(Client client) throws Exception {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
        try {
            EtcdCalls calls = new EtcdCalls(client, "etcd", Ticker.system(), timer);
            EtcdCalls.Write<?> put = calls.write(
                    "putting a key",
                    txn -> txn.Then(Op.put(FILLER, FILLER, PutOption.DEFAULT)),
                    Deadline.after(Duration.ofSeconds(10), Ticker.system()));
            assertThatThrownBy(() -> put.result().get(10, TimeUnit.SECONDS))
                    .hasMessageContaining("etcd's database is full");
            return put.anySendAnswered();
        } finally {
            timer.shutdownNow();
        }
    }

    /** Puts values under {@link #FILLER} until etcd refuses them for want of space. */
    private static void fill(Client client) throws Exception {
        ByteSequence value = ByteSequence.from("x".repeat(100_000), StandardCharsets.UTF_8);
        for (int i = 0; i < 1000; i++) {
            try {
                client.getKVClient()
                        .put(ByteSequence.from("/filler/" + i, StandardCharsets.UTF_8), value)
                        .get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                assertThat(e.getCause()).hasMessageContaining("database space exceeded");
                return;
            }
        }
        throw new AssertionError("etcd took 100 MB under a quota of " + QUOTA_BYTES + " bytes");
    }
}
