package io.distlock.benchmarks;

import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw Redis floor: {@code peer:redis-setnx://h1:6379[,h2:6379,...]}. {@code SET key owner NX PX 30000} on every
 * master in parallel, held when a majority answered OK; released (and a lost majority rolled back) with a Lua
 * compare-and-delete on every master in parallel. A busy key is tried again after {@link Backoff#PAUSE_NANOS}. With
 * one master it is the single-instance floor; with N it is Redlock's round trips without its clock checks.
 */
public final class RedisFloorPeer implements BenchTargetFactory {

    private static final long LEASE_MILLIS = 30_000;
    private static final long TIMEOUT_SECONDS = 10;

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "redis-setnx");
    }

    @Override
    public BenchTarget open(String spec) throws IOException {
        PeerSpec peer = PeerSpec.parse(spec, 6379);
        String script = script();
        List<RedisClient> clients = new ArrayList<>();
        List<RedisAsyncCommands<String, String>> masters = new ArrayList<>();
        try {
            for (String host : peer.hosts()) {
                RedisClient client = RedisClient.create(RedisURI.create(PeerSpec.host(host), PeerSpec.port(host)));
                clients.add(client);
                StatefulRedisConnection<String, String> connection = client.connect();
                connection.sync().scriptLoad(script);
                masters.add(connection.async());
            }
        } catch (RuntimeException e) {
            clients.forEach(RedisClient::shutdown);
            throw e;
        }
        return new Floor(clients, masters, masters.get(0).digest(script));
    }

    /** Each acquisition sets a value of its own, so the threads of one client exclude each other. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return "peer:redis-setnx://h1:6379[,h2,...] (raw SET NX PX + Lua compare-and-delete, one or N masters)";
    }

    private static String script() throws IOException {
        try (InputStream in = RedisFloorPeer.class.getResourceAsStream("compare-and-delete.lua")) {
            if (in == null) {
                throw new IOException("compare-and-delete.lua missing from the benchmarks jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static final class Floor implements BenchTarget {
        private final List<RedisClient> clients;
        private final List<RedisAsyncCommands<String, String>> masters;
        private final String scriptSha;
        private final int quorum;
        private final AtomicLong requests = new AtomicLong();

        Floor(List<RedisClient> clients, List<RedisAsyncCommands<String, String>> masters, String scriptSha) {
            this.clients = clients;
            this.masters = masters;
            this.scriptSha = scriptSha;
            this.quorum = masters.size() / 2 + 1;
        }

        @Override
        public Held acquire(String key) throws Exception {
            String owner = UUID.randomUUID().toString();
            SetArgs nxPx = SetArgs.Builder.nx().px(LEASE_MILLIS);
            while (true) {
                List<RedisFuture<String>> sets = new ArrayList<>();
                for (RedisAsyncCommands<String, String> m : masters) {
                    sets.add(m.set(key, owner, nxPx));
                }
                requests.addAndGet(masters.size());
                int won = 0;
                for (RedisFuture<String> set : sets) {
                    if ("OK".equals(set.get(TIMEOUT_SECONDS, TimeUnit.SECONDS))) {
                        won++;
                    }
                }
                if (won >= quorum) {
                    return () -> release(key, owner);
                }
                if (won > 0) {
                    release(key, owner);
                }
                Backoff.pause();
            }
        }

        private void release(String key, String owner) throws Exception {
            List<RedisFuture<Long>> deletes = new ArrayList<>();
            for (RedisAsyncCommands<String, String> m : masters) {
                deletes.add(m.evalsha(scriptSha, ScriptOutputType.INTEGER, new String[] {key}, owner));
            }
            requests.addAndGet(masters.size());
            for (RedisFuture<Long> d : deletes) {
                d.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
        }

        @Override
        public OptionalLong storeRequests() {
            return OptionalLong.of(requests.get());
        }

        @Override
        public void close() {
            clients.forEach(RedisClient::shutdown);
        }
    }
}
