package io.distlock.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;

/** Looks into the masters directly, beside the backend under test: keys, values, subscribers. For tests only. */
final class RedisProbe implements AutoCloseable {

    private final List<String> endpoints;
    private final List<RedisClient> clients = new ArrayList<>();
    private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();

    RedisProbe(List<String> endpoints) {
        this(endpoints, uri -> {}, ClientOptions.create());
    }

    /**
     * A probe whose URIs get {@code settings} (credentials, TLS) and whose clients get {@code options} (TLS trust and
     * certificates): for secured servers.
     */
    RedisProbe(List<String> endpoints, Consumer<RedisURI.Builder> settings, ClientOptions options) {
        this.endpoints = List.copyOf(endpoints);
        for (String e : endpoints) {
            int colon = e.lastIndexOf(':');
            RedisURI.Builder uri = RedisURI.builder()
                    .withHost(e.substring(0, colon))
                    .withPort(Integer.parseInt(e.substring(colon + 1)))
                    .withTimeout(Duration.ofSeconds(5));
            settings.accept(uri);
            RedisClient c = RedisClient.create(uri.build());
            c.setOptions(options);
            clients.add(c);
            connections.add(null);
        }
    }

    /** A key no other test uses. */
    static String uniqueKey(String name) {
        return name + "-" + UUID.randomUUID().toString().substring(0, 12);
    }

    private RedisCommands<String, String> on(int master) {
        StatefulRedisConnection<String, String> c = connections.get(master);
        if (c == null || !c.isOpen()) {
            if (c != null) {
                c.close(); // lost with its master: it would go on reconnecting in the background
            }
            c = clients.get(master).connect();
            connections.set(master, c);
        }
        return c.sync();
    }

    /**
     * Every key under {@code prefix} on the given masters, as {@code endpoint -> [key=value, ...]}; masters without
     * such a key are left out.
     */
    Map<String, List<String>> keys(String prefix, List<Integer> masters) {
        Map<String, List<String>> found = new TreeMap<>();
        for (int i : masters) {
            List<String> entries = on(i).eval(LIST, ScriptOutputType.MULTI, new String[0], prefix + "*");
            if (!entries.isEmpty()) {
                found.put(endpoints.get(i), entries);
            }
        }
        return found;
    }

    /**
     * Lists the keys matching ARGV[1] inside the master, byte for byte (a read-write lock's or semaphore's key ends in
     * the byte 0xFF and a tag, which no text decodes back to): a lock as {@code key=value}, a set of holders as {@code
     * key=[holder, ...]}, a key's release requests as {@code key={holder, ids, ...}}.
     */
    private static final String LIST = "local out = {} for _, k in ipairs(redis.call('keys', ARGV[1])) do"
            + " local t = redis.call('type', k).ok"
            + " if t == 'zset' then"
            + " out[#out + 1] = k .. '=[' .. table.concat(redis.call('zrange', k, 0, -1), ', ') .. ']'"
            + " elseif t == 'hash' then"
            + " out[#out + 1] = k .. '={' .. table.concat(redis.call('hgetall', k), ', ') .. '}'"
            + " else out[#out + 1] = k .. '=' .. tostring(redis.call('get', k)) end end return out";

    /** Adds {@code holder} with {@code expiry} ms from now to the set at {@code spaceKey} on master {@code index}. */
    void addHolder(int master, byte[] spaceKey, String holder, Duration expiry) {
        on(master)
                .dispatch(
                        CommandType.EVAL,
                        new IntegerOutput<>(StringCodec.UTF8),
                        new CommandArgs<>(StringCodec.UTF8)
                                .add("local t = redis.call('time') local now = t[1] * 1000 + math.floor(t[2] / 1000)"
                                        + " redis.call('zadd', KEYS[1], now + ARGV[2], ARGV[1])"
                                        + " return redis.call('pexpire', KEYS[1], ARGV[2])")
                                .add(1)
                                .add(spaceKey)
                                .add(holder)
                                .add(expiry.toMillis()));
    }

    /** Keys under {@code prefix} on all masters. */
    Map<String, List<String>> keys(String prefix) {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < endpoints.size(); i++) {
            all.add(i);
        }
        return keys(prefix, all);
    }

    /** The value of {@code key} on master {@code index}, or null. */
    String get(int master, String key) {
        return on(master).get(key);
    }

    /** Sets {@code key} to {@code value} with a ttl on master {@code index} (a foreign holder's key). */
    void set(int master, String key, String value, Duration ttl) {
        on(master).psetex(key, ttl.toMillis(), value);
    }

    /** The milliseconds {@code key} has left on master {@code index}: -2 if it does not exist, -1 if it never expires. */
    long pttl(int master, String key) {
        return on(master).pttl(key);
    }

    /** Deletes {@code key} on master {@code index}, whoever holds it. */
    void delete(int master, String key) {
        on(master).del(key);
    }

    /** Publishes {@code message} on {@code channel} from master {@code index} (a release told by that master alone). */
    void publish(int master, String channel, String message) {
        on(master).publish(channel, message);
    }

    /** Whether {@code key} exists on master {@code index} (the access also expires it if its time is up). */
    boolean exists(int master, String key) {
        return on(master).exists(key) > 0;
    }

    /** Subscribers of {@code channel} on master {@code index}. */
    long subscribers(int master, String channel) {
        Map<String, Long> n = on(master).pubsubNumsub(channel);
        return n.getOrDefault(channel, 0L);
    }

    /**
     * How many times the masters have run {@code command} (lower case, e.g. {@code set}) since they started, summed
     * over all of them: {@code INFO commandstats}.
     */
    long calls(String command) {
        long total = 0;
        String prefix = "cmdstat_" + command + ":calls=";
        for (int i = 0; i < endpoints.size(); i++) {
            for (String line : on(i).info("commandstats").split("\r?\n")) {
                if (line.startsWith(prefix)) {
                    int end = line.indexOf(',', prefix.length());
                    total += Long.parseLong(line.substring(prefix.length(), end < 0 ? line.length() : end));
                }
            }
        }
        return total;
    }

    /**
     * Holds every client's writes on master {@code index} for {@code pause} ({@code CLIENT PAUSE ms WRITE}: {@code SET}
     * and scripts wait, reads go on) and returns the longest time to live left of a key under {@code prefix} there,
     * zero if there is none: with writes held, no key can be set or extended past that until the pause ends. For a
     * master about to be stopped, that is how long it must stay down to forget nothing it would still have to hold.
     *
     * @throws IllegalStateException if a key under the prefix has no time to live (no lock key is set so)
     */
    Duration holdWritesAndLongestTtl(int master, String prefix, Duration pause) {
        RedisCommands<String, String> redis = on(master);
        redis.dispatch(
                CommandType.CLIENT,
                new StatusOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8)
                        .add("PAUSE")
                        .add(pause.toMillis())
                        .add("WRITE"));
        long longest = 0;
        for (String key : redis.keys(prefix + "*")) {
            long ttl = redis.pttl(key);
            if (ttl == -1) {
                throw new IllegalStateException("Key " + key + " on " + endpoints.get(master) + " never expires");
            }
            longest = Math.max(longest, ttl); // -2: expired since KEYS listed it
        }
        return Duration.ofMillis(longest);
    }

    /** Forgets the connection to a master that was restarted. */
    void reconnect(int master) {
        StatefulRedisConnection<String, String> c = connections.set(master, null);
        if (c != null) {
            c.close();
        }
    }

    @Override
    public void close() {
        for (StatefulRedisConnection<String, String> c : connections) {
            if (c != null) {
                c.close();
            }
        }
        for (RedisClient c : clients) {
            c.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }
}
