package io.distlock.etcd;

import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.ServerNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/** What the etcd tests share: URIs for a fixture, and how long etcd takes to free a dead client's locks. */
final class EtcdTesting {

    private EtcdTesting() {}

    /** A key unique to this call, starting with {@code name}. */
    static String unique(String name) {
        return name + "-" + java.util.UUID.randomUUID().toString().substring(0, 12);
    }

    /** {@code etcd://<every member's client endpoint>/<prefix>}. */
    static String uri(EtcdCluster etcd, String prefix) {
        return "etcd://" + etcd.nodes().stream().map(ServerNode::endpoint).collect(Collectors.joining(",")) + prefix;
    }

    /** The same through every member's proxy, for tests that cut the client off. */
    static String proxiedUri(EtcdCluster etcd, String prefix) {
        return "etcd://"
                + etcd.nodes().stream().map(ServerNode::proxiedEndpoint).collect(Collectors.joining(",")) + prefix;
    }

    /**
     * The etcd keys of lock {@code key} under {@code prefix}: in fair mode its queue keys {@code <prefix>/<name>/<lease>},
     * in cas mode its one key {@code <prefix>/<name>} if present.
     */
    static List<String> lockKeys(Client client, String prefix, String key, EtcdLockMode mode) {
        String name = prefix + "/" + KeyCodec.encode(key);
        boolean fair = mode == EtcdLockMode.FAIR;
        GetOption option = fair ? GetOption.builder().isPrefix(true).build() : GetOption.DEFAULT;
        try {
            return client
                    .getKVClient()
                    .get(ByteSequence.from(fair ? name + "/" : name, StandardCharsets.UTF_8), option)
                    .get(10, TimeUnit.SECONDS)
                    .getKvs()
                    .stream()
                    .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                    .collect(Collectors.toList());
        } catch (Exception e) {
            throw new IllegalStateException("Cannot list the etcd keys of '" + key + "'", e);
        }
    }

    /** As {@link #lockKeys(Client, String, String, EtcdLockMode)}, read with a client of its own to every member. */
    static List<String> lockKeys(EtcdCluster etcd, String prefix, String key, EtcdLockMode mode) {
        try (Client client = Client.builder()
                .endpoints(etcd.clientEndpoints().toArray(String[]::new))
                .build()) {
            return lockKeys(client, prefix, key, mode);
        }
    }

    /**
     * Every etcd key of {@code key} under {@code prefix}, in every space: the lock's ({@link #lockKeys}), the read-write
     * lock's and the semaphore's: their queues in fair mode ({@link FairQueue}), their records, holders and waiting
     * writers' marks in cas mode ({@link CasRecord}).
     */
    static List<String> keysOfEveryKind(Client client, String prefix, String key, EtcdLockMode mode) {
        List<String> keys = new java.util.ArrayList<>(lockKeys(client, prefix, key, mode));
        for (String space : List.of(FairQueue.READ_WRITE, FairQueue.SEMAPHORE)) {
            keys.addAll(lockKeys(client, prefix + "/" + space, key, mode));
            if (mode == EtcdLockMode.CAS) {
                String record = prefix + "/" + space + "/" + KeyCodec.encode(key);
                keys.addAll(keysUnder(client, CasRecord.holdersDir(record)));
                keys.addAll(keysUnder(client, record + CasRecord.WAITS + "/")); // waiting writers' marks
            }
        }
        return keys;
    }

    /** The keys under the directory {@code dir}. */
    static List<String> keysUnder(Client client, String dir) {
        try {
            return client
                    .getKVClient()
                    .get(
                            ByteSequence.from(dir, StandardCharsets.UTF_8),
                            GetOption.builder()
                                    .isPrefix(true)
                                    .withKeysOnly(true)
                                    .build())
                    .get(10, TimeUnit.SECONDS)
                    .getKvs()
                    .stream()
                    .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                    .collect(Collectors.toList());
        } catch (Exception e) {
            throw new IllegalStateException("Cannot list the etcd keys under " + dir, e);
        }
    }

    /**
     * The index of the member of {@code etcd} that is the raft leader now, waiting out an election in progress: on a
     * loaded machine a member can miss the leader's heartbeats and call one at any moment, and until it ends no member
     * says it leads.
     */
    static int leader(EtcdCluster etcd) throws InterruptedException {
        Duration within = TestTimeouts.scaled(Duration.ofSeconds(10));
        int[] found = {-1};
        List<String> said = new ArrayList<>();
        if (!Deadlines.within(within, () -> (found[0] = leaderNow(etcd, said)) >= 0)) {
            throw new AssertionError("no member said it was the leader within " + within + "; last answers: " + said);
        }
        return found[0];
    }

    /** The member that says it leads, or -1; what each member said instead goes to {@code said}. */
    private static int leaderNow(EtcdCluster etcd, List<String> said) {
        long ask = TestTimeouts.scaled(Duration.ofSeconds(1)).toMillis(); // a killed member is not waited for long
        said.clear();
        for (int i = 0; i < etcd.nodes().size(); i++) {
            String endpoint = "http://" + etcd.member(i).endpoint();
            try (Client client = Client.builder().endpoints(endpoint).build()) {
                StatusResponse status =
                        client.getMaintenanceClient().statusMember(endpoint).get(ask, TimeUnit.MILLISECONDS);
                if (status.getHeader().getMemberId() == status.getLeader()) {
                    return i;
                }
                said.add("member " + i + ": leader " + Long.toHexString(status.getLeader()));
            } catch (ExecutionException | TimeoutException e) {
                said.add("member " + i + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while asking who leads", e);
            }
        }
        return -1;
    }

    /**
     * How long after its holder died etcd frees a lock: the lease TTL (whole seconds, at least etcd's minimum of about
     * 1.5 election timeouts, 1s with the fixture's settings) after the last keep-alive.
     */
    static Duration sessionTimeout(Duration leaseTime) {
        long seconds = EtcdLockBackendProvider.ttlSeconds(leaseTime);
        return Duration.ofSeconds(seconds).plus(TestTimeouts.scaled(Duration.ofSeconds(1)));
    }
}
