package io.distlock.benchmarks;

import io.distlock.LockKind;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * etcd through jetcd: {@code peer:jetcd-lock://h:2379} (etcd's own Lock service, as {@code etcdctl lock}), the raw
 * floor {@code peer:etcd-txn://h:2379} (a txn putting the key if its {@code createRevision == 0}, a txn deleting it if
 * its value is still ours; a busy key is tried again after {@link Backoff#PAUSE_NANOS}) and the raw queue floor {@code
 * peer:etcd-queue://h:2379} (etcd's {@code concurrency.Mutex} protocol with each waiter's watch created synced; see
 * {@link QueueFloor}); and for {@code --workload failover}, jetcd's Election client: {@code
 * peer:jetcd-election://h:2379?ttl=10s} (campaign, resign; see {@link ElectionService}). All attach their keys to one
 * lease kept alive by the client, of option {@code ttl} (default 30 s; etcd rounds it to whole seconds and raises it to
 * its minimum).
 */
public final class EtcdPeer implements BenchTargetFactory {

    private static final Duration LEASE = Duration.ofSeconds(30);
    /** Bounds every request; generous, as worker JVMs opening at once on a loaded machine wait long for their lease. */
    private static final long TIMEOUT_SECONDS = 60;

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "jetcd-lock")
                || PeerSpec.names(spec, "etcd-txn")
                || PeerSpec.names(spec, "etcd-queue")
                || PeerSpec.names(spec, "jetcd-election");
    }

    @Override
    public BenchTarget open(String spec) throws Exception {
        PeerSpec peer = PeerSpec.parse(spec, 2379);
        long leaseSeconds = Math.max(1, (peer.ttl(LEASE).toMillis() + 999) / 1000);
        Client client = Client.builder()
                .endpoints(peer.hosts().stream().map(h -> "http://" + h).toArray(String[]::new))
                .build();
        long lease;
        CloseableClient keepAlive;
        try {
            lease = client.getLeaseClient()
                    .grant(leaseSeconds)
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .getID();
            keepAlive = client.getLeaseClient().keepAlive(lease, new Ignore());
        } catch (Exception e) {
            client.close();
            throw e;
        }
        return switch (peer.name()) {
            case "jetcd-lock" -> new LockService(client, lease, keepAlive);
            case "etcd-queue" -> new QueueFloor(client, lease, keepAlive);
            case "jetcd-election" -> new ElectionService(client, lease, keepAlive);
            default -> new TxnFloor(client, lease, keepAlive);
        };
    }

    /** Only the txn floor: the Lock service and the queue floor name their key after the client's one lease. */
    @Override
    public boolean sharedByThreads(String spec) {
        return PeerSpec.names(spec, "etcd-txn");
    }

    @Override
    public String describe() {
        return "peer:jetcd-lock://h:2379 (etcd Lock service), peer:etcd-txn://h:2379 (raw txn floor),"
                + " peer:etcd-queue://h:2379 (raw queue floor), peer:jetcd-election://h:2379?ttl=10s (jetcd Election,"
                + " failover workload)";
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** etcd's Lock service. */
    private record LockService(Client client, long lease, CloseableClient keepAlive) implements BenchTarget {
        @Override
        public Held acquire(String key) throws Exception {
            ByteSequence owned =
                    client.getLockClient().lock(bytes(key), lease).get().getKey();
            return () -> client.getLockClient().unlock(owned).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            keepAlive.close();
            client.close();
        }
    }

    /**
     * jetcd's Election client (etcd's v3election service, as {@code etcdctl elect}): a candidate campaigns with its
     * proposal (the identity) on the target's lease, and "you lead" is the campaign's reply; a step-down resigns the
     * leader key and campaigns again, behind the others.
     */
    private record ElectionService(Client client, long lease, CloseableClient keepAlive) implements BenchTarget {
        @Override
        public Held acquire(String key) {
            throw new UnsupportedOperationException("peer:jetcd-election runs --workload failover only (jetcd's"
                    + " Election); measure etcd's Lock service with peer:jetcd-lock");
        }

        /** Every kind is refused as the lock is: this peer has no locks at all. */
        @Override
        public Held acquire(String key, LockKind kind, int permits) {
            return acquire(key);
        }

        @Override
        public Candidate join(String election, String identity, Runnable elected) {
            AtomicReference<CompletableFuture<LeaderKey>> term =
                    new AtomicReference<>(campaign(election, identity, elected));
            return () -> {
                LeaderKey leader = term.get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                client.getElectionClient().resign(leader).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                term.set(campaign(election, identity, elected));
            };
        }

        private CompletableFuture<LeaderKey> campaign(String election, String identity, Runnable elected) {
            return client.getElectionClient()
                    .campaign(bytes(election), lease, bytes(identity))
                    .thenApply(reply -> {
                        elected.run();
                        return reply.getLeader();
                    });
        }

        @Override
        public void close() {
            keepAlive.close();
            client.close();
        }
    }

    /** A raw floor: jetcd's KV client on one lease, every request it sends counted. */
    private abstract static class RawFloor implements BenchTarget {
        final Client client;
        final KV kv;
        final long lease;
        final CloseableClient keepAlive;
        final AtomicLong requests = new AtomicLong();

        RawFloor(Client client, long lease, CloseableClient keepAlive) {
            this.client = client;
            this.kv = client.getKVClient();
            this.lease = lease;
            this.keepAlive = keepAlive;
        }

        @Override
        public java.util.OptionalLong storeRequests() {
            return java.util.OptionalLong.of(requests.get());
        }

        @Override
        public void close() {
            keepAlive.close();
            client.close();
        }
    }

    /** The raw floor: compare-and-put on createRevision, compare-and-delete on the value. */
    private static final class TxnFloor extends RawFloor {
        TxnFloor(Client client, long lease, CloseableClient keepAlive) {
            super(client, lease, keepAlive);
        }

        @Override
        public Held acquire(String key) throws Exception {
            ByteSequence k = bytes(key);
            ByteSequence owner = bytes(UUID.randomUUID().toString());
            while (true) {
                requests.incrementAndGet();
                TxnResponse put = kv.txn()
                        .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(
                                k, owner, PutOption.builder().withLeaseId(lease).build()))
                        .commit()
                        .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                if (put.isSucceeded()) {
                    return () -> {
                        requests.incrementAndGet();
                        kv.txn()
                                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.value(owner)))
                                .Then(Op.delete(k, DeleteOption.DEFAULT))
                                .commit()
                                .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    };
                }
                Backoff.pause();
            }
        }
    }

    /**
     * The raw queue floor: etcd's {@code concurrency.Mutex} protocol, as few requests as it takes. The attempt puts
     * {@code <key>/<lease in hex>} with the lease if absent and, in the same txn, reads the key created first under
     * {@code <key>/}: if that is ours, the lock is ours. Otherwise it reads its predecessor (the last key created before
     * ours) and waits for its deletion, then reads again. The waiter's watch is created without a start revision, so etcd
     * registers it synced (its events come at once, not from the 100 ms catch-up loop of watches that start in the past);
     * once etcd has confirmed its creation, the predecessor is read once more, for a deletion between the first read and
     * the watch. The release deletes our key. Store requests: every txn, read, delete and watch creation.
     */
    private static final class QueueFloor extends RawFloor {
        private final Watch watch;

        QueueFloor(Client client, long lease, CloseableClient keepAlive) {
            super(client, lease, keepAlive);
            this.watch = client.getWatchClient();
        }

        @Override
        public Held acquire(String key) throws Exception {
            String dir = key + "/";
            ByteSequence end = bytes(key + (char) ('/' + 1));
            ByteSequence mine = bytes(dir + Long.toHexString(lease));
            GetOption first = GetOption.builder()
                    .withRange(end)
                    .withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND)
                    .withLimit(1)
                    .build();
            requests.incrementAndGet();
            TxnResponse put = kv.txn()
                    .If(new Cmp(mine, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(
                            Op.put(
                                    mine,
                                    bytes(""),
                                    PutOption.builder().withLeaseId(lease).build()),
                            Op.get(bytes(dir), first))
                    .Else(Op.get(mine, GetOption.DEFAULT), Op.get(bytes(dir), first))
                    .commit()
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            long myRev = put.isSucceeded()
                    ? put.getHeader().getRevision()
                    : put.getGetResponses().get(0).getKvs().get(0).getCreateRevision();
            // getGetResponses() holds only the reads: the owner read is the first of Then, the second of Else
            List<KeyValue> owner =
                    put.getGetResponses().get(put.isSucceeded() ? 0 : 1).getKvs();
            if (owner.isEmpty() || owner.get(0).getCreateRevision() != myRev) {
                waitForPredecessors(dir, end, myRev);
            }
            return () -> {
                requests.incrementAndGet();
                kv.delete(mine).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            };
        }

        private void waitForPredecessors(String dir, ByteSequence end, long myRev) throws Exception {
            GetOption predecessor = GetOption.builder()
                    .withRange(end)
                    .withMaxCreateRevision(myRev - 1)
                    .withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.DESCEND)
                    .withLimit(1)
                    .build();
            while (true) {
                requests.incrementAndGet();
                List<KeyValue> before = kv.get(bytes(dir), predecessor)
                        .get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                        .getKvs();
                if (before.isEmpty()) {
                    return;
                }
                waitForDeletion(before.get(0).getKey(), before.get(0).getCreateRevision());
            }
        }

        private void waitForDeletion(ByteSequence key, long createRevision) throws Exception {
            CompletableFuture<Void> created = new CompletableFuture<>();
            CompletableFuture<Void> deleted = new CompletableFuture<>();
            requests.incrementAndGet();
            WatchOption option =
                    WatchOption.builder().withNoPut(true).withCreateNotify(true).build();
            try (Watch.Watcher watcher = watch.watch(
                    key,
                    option,
                    Watch.listener(
                            response -> {
                                if (response.isCreatedNotify()) {
                                    created.complete(null);
                                }
                                for (WatchEvent event : response.getEvents()) {
                                    if (event.getEventType() == WatchEvent.EventType.DELETE) {
                                        deleted.complete(null);
                                    }
                                }
                            },
                            deleted::completeExceptionally))) {
                created.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                requests.incrementAndGet();
                List<KeyValue> again =
                        kv.get(key).get(TIMEOUT_SECONDS, TimeUnit.SECONDS).getKvs();
                if (again.isEmpty() || again.get(0).getCreateRevision() != createRevision) {
                    return; // deleted before the watch started
                }
                deleted.get();
            }
        }
    }

    /** Keep-alive replies need no handling here. */
    private static final class Ignore implements StreamObserver<LeaseKeepAliveResponse> {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}
