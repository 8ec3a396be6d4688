package io.distlock.benchmarks;

import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * etcd through jetcd: {@code peer:jetcd-lock://h:2379} (etcd's own Lock service, as {@code etcdctl lock}) and the raw
 * floor {@code peer:etcd-txn://h:2379} (a txn putting the key if its {@code createRevision == 0}, a txn deleting it if
 * its value is still ours; a busy key is tried again after {@link Backoff#PAUSE_NANOS}). Both attach the locks to one
 * lease of 30 s kept alive by the client.
 */
public final class EtcdPeer implements BenchTargetFactory {

    private static final long LEASE_SECONDS = 30;
    private static final long TIMEOUT_SECONDS = 10;

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "jetcd-lock") || PeerSpec.names(spec, "etcd-txn");
    }

    @Override
    public BenchTarget open(String spec) throws Exception {
        PeerSpec peer = PeerSpec.parse(spec, 2379);
        Client client = Client.builder()
                .endpoints(peer.hosts().stream().map(h -> "http://" + h).toArray(String[]::new))
                .build();
        long lease;
        CloseableClient keepAlive;
        try {
            lease = client.getLeaseClient()
                    .grant(LEASE_SECONDS)
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .getID();
            keepAlive = client.getLeaseClient().keepAlive(lease, new Ignore());
        } catch (Exception e) {
            client.close();
            throw e;
        }
        return peer.name().equals("jetcd-lock")
                ? new LockService(client, lease, keepAlive)
                : new TxnFloor(client, lease, keepAlive);
    }

    @Override
    public String describe() {
        return "peer:jetcd-lock://h:2379 (etcd Lock service), peer:etcd-txn://h:2379 (raw txn floor)";
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

    /** The raw floor: compare-and-put on createRevision, compare-and-delete on the value. */
    private static final class TxnFloor implements BenchTarget {
        private final Client client;
        private final KV kv;
        private final long lease;
        private final CloseableClient keepAlive;
        private final AtomicLong requests = new AtomicLong();

        TxnFloor(Client client, long lease, CloseableClient keepAlive) {
            this.client = client;
            this.kv = client.getKVClient();
            this.lease = lease;
            this.keepAlive = keepAlive;
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
