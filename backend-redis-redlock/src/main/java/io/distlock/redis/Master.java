package io.distlock.redis;

import io.distlock.LockBackendException;
import io.distlock.toolkit.RequestTimeouts;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.KeyScanOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One independent Redis master: one command connection (commands from every thread are pipelined on it, so a
 * clean-up sent after a {@code SET} reaches the server after it) and one pub/sub connection, subscribed to the
 * release channel while something waits. Every command answers a {@link Vote} within the per-instance timeout and never
 * throws. A master unreachable at open, or lost later, is reconnected in the background while the others carry on.
 */
final class Master implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Master.class);

    private static final int SCAN_COUNT = 1000;
    private static final StringCodec BYTES_AS_CHARS = new StringCodec(StandardCharsets.ISO_8859_1);

    private final String name;
    private final Connector connector;
    private final Duration instanceTimeout;
    private final String keyPrefix;
    private final LongAdder requests;
    private final RequestTimeouts timeouts = new RequestTimeouts();
    private final Object connectLock = new Object();
    private volatile StatefulRedisConnection<String, String> connection;
    private CompletableFuture<StatefulRedisConnection<String, String>> connecting;
    private CompletableFuture<StatefulRedisPubSubConnection<String, String>> pubSubOpened;
    private CompletableFuture<Void> subscription;
    private StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile String lastError = "not yet contacted";
    private volatile Optional<String> refusal = Optional.empty();
    private volatile boolean refusedForGood;
    private volatile boolean closed;

    /**
     * @param name how messages name the master ({@code host:port})
     * @param connector makes its connections, closed with it
     */
    Master(String name, Connector connector, RedlockSettings settings, LongAdder requests) {
        this.name = name;
        this.connector = connector;
        this.instanceTimeout = settings.instanceTimeout();
        this.keyPrefix = settings.keyPrefix();
        this.requests = requests;
    }

    /** The last failure seen on this master, for messages. */
    String lastError() {
        return lastError;
    }

    /**
     * Why this master refused us, if it did: authentication, permission on the key prefix, TLS (see {@link
     * RedisFailures}). Such a refusal does not pass by waiting.
     */
    Optional<String> refusal() {
        return refusal;
    }

    /**
     * Whether this master's last failed command was refused for a reason no wait outlasts ({@link
     * RedisFailures#lasts}): a waiter whose attempts such masters deny a majority fails at once.
     */
    boolean refusedForGood() {
        return refusedForGood;
    }

    /** Connects, or joins the connection under way; completes when connected (exceptionally if that failed). */
    CompletableFuture<StatefulRedisConnection<String, String>> connect() {
        synchronized (connectLock) {
            if (connection != null) {
                return CompletableFuture.completedFuture(connection);
            }
            if (connecting != null) {
                return connecting;
            }
            CompletableFuture<StatefulRedisConnection<String, String>> started = connector.connect();
            connecting = started.whenComplete((c, e) -> {
                synchronized (connectLock) {
                    connecting = null;
                    if (c != null) {
                        if (closed) {
                            connector.discard(c);
                        } else {
                            connection = c;
                        }
                    } else {
                        failed("cannot connect: ", e, true);
                    }
                }
            });
            return connecting;
        }
    }

    /** {@code SET key value NX PX ttl}: YES if set, NO if the key exists. */
    CompletableFuture<Vote> setIfAbsent(String key, String value, long ttlMillis) {
        return send(
                c -> command(c.set(key, value, SetArgs.Builder.nx().px(ttlMillis)), instanceTimeout),
                reply -> reply != null ? Vote.YES : Vote.NO,
                instanceTimeout);
    }

    /**
     * {@code PUBLISH channel message} on the command connection (a subscribed connection cannot publish): YES once the
     * master took it, whoever heard it.
     */
    CompletableFuture<Vote> publish(String channel, String message) {
        return send(c -> command(c.publish(channel, message), instanceTimeout), receivers -> Vote.YES, instanceTimeout);
    }

    /**
     * Runs a script by {@code EVALSHA}; on {@code NOSCRIPT} (a restarted master) sends its body once by EVAL, which
     * also loads it. YES when it returned 1. Each command waits at most {@code timeout}.
     */
    CompletableFuture<Vote> run(Duration timeout, LuaScript script, String key, String... args) {
        String[] keys = {key};
        return send(
                c -> command(c.<Long>evalsha(script.sha(), ScriptOutputType.INTEGER, keys, args), timeout)
                        .handle((reply, error) -> {
                            if (error == null) {
                                return CompletableFuture.completedFuture(reply);
                            }
                            if (!(unwrap(error) instanceof RedisNoScriptException)) {
                                return CompletableFuture.<Long>failedFuture(error);
                            }
                            log.debug("Script {} not loaded on {} (restarted?); sending it by EVAL", script, name);
                            return command(c.<Long>eval(script.body(), ScriptOutputType.INTEGER, keys, args), timeout);
                        })
                        .thenCompose(f -> f),
                reply -> reply != null && reply == 1L ? Vote.YES : Vote.NO,
                timeout);
    }

    /**
     * Runs a script on a key given as bytes (a read-write lock's or a semaphore's: {@link RedlockSettings#spaceKey}),
     * by {@code EVALSHA}, or on {@code NOSCRIPT} once by {@code EVAL}; {@code verdict} turns its integer reply into a
     * vote. Each command waits at most {@code timeout}.
     */
    CompletableFuture<Vote> run(
            Duration timeout, LuaScript script, byte[] key, LongFunction<Vote> verdict, String... args) {
        return run(timeout, script, List.of(key), verdict, args);
    }

    /** {@link #run(Duration, LuaScript, byte[], LongFunction, String...)} on several keys. */
    CompletableFuture<Vote> run(
            Duration timeout, LuaScript script, List<byte[]> keys, LongFunction<Vote> verdict, String... args) {
        return vote(
                timeout,
                script,
                keys,
                () -> new IntegerOutput<>(StringCodec.UTF8),
                reply -> reply == null ? Vote.NO : verdict.apply(reply),
                args);
    }

    /**
     * Runs a script that answers an array (the renewals: {@code renew.lua}, {@code shared.lua}'s {@code renew}) on
     * keys given as bytes, by {@code EVALSHA}, or on {@code NOSCRIPT} once by {@code EVAL}; {@code verdict} turns its
     * reply, as Lettuce reads a nested array ({@code Long}, {@code String} in UTF-8), into a vote. Each command waits
     * at most {@code timeout}; like {@link #run}, it answers {@link Vote#FAILED} rather than failing.
     */
    CompletableFuture<Vote> runForArray(
            Duration timeout,
            LuaScript script,
            List<byte[]> keys,
            Function<List<Object>, Vote> verdict,
            String... args) {
        return vote(timeout, script, keys, () -> new NestedMultiOutput<>(StringCodec.UTF8), verdict, args);
    }

    private <T> CompletableFuture<Vote> vote(
            Duration timeout,
            LuaScript script,
            List<byte[]> keys,
            Supplier<CommandOutput<String, String, T>> output,
            Function<T, Vote> verdict,
            String... args) {
        return send(
                c -> command(
                                c.dispatch(CommandType.EVALSHA, output.get(), scriptArgs(script.sha(), keys, args)),
                                timeout)
                        .handle((reply, error) -> {
                            if (error == null) {
                                return CompletableFuture.completedFuture(reply);
                            }
                            if (!(unwrap(error) instanceof RedisNoScriptException)) {
                                return CompletableFuture.<T>failedFuture(error);
                            }
                            log.debug("Script {} not loaded on {} (restarted?); sending it by EVAL", script, name);
                            return command(
                                    c.dispatch(CommandType.EVAL, output.get(), scriptArgs(script.body(), keys, args)),
                                    timeout);
                        })
                        .thenCompose(f -> f),
                verdict,
                timeout);
    }

    /**
     * Runs a script on keys given as bytes and returns its reply as Lettuce reads a nested array ({@code Long},
     * {@code String} in UTF-8, {@code List} of them); by {@code EVALSHA}, or on {@code NOSCRIPT} once by {@code EVAL}.
     * Unlike {@link #run}, it fails (exceptionally) when the master does not answer within {@code timeout}: for an
     * operator's look-up, which reports a master it could not read rather than counting it as a vote.
     */
    CompletableFuture<List<Object>> query(Duration timeout, LuaScript script, List<byte[]> keys, String... args) {
        return connected(timeout).thenCompose(c -> command(
                        c.dispatch(
                                CommandType.EVALSHA,
                                new NestedMultiOutput<>(StringCodec.UTF8),
                                scriptArgs(script.sha(), keys, args)),
                        timeout)
                .exceptionallyCompose(error -> unwrap(error) instanceof RedisNoScriptException
                        ? command(
                                c.dispatch(
                                        CommandType.EVAL,
                                        new NestedMultiOutput<>(StringCodec.UTF8),
                                        scriptArgs(script.body(), keys, args)),
                                timeout)
                        : CompletableFuture.failedFuture(error)));
    }

    /**
     * Every key whose name starts with {@code prefix}, by {@code SCAN MATCH <prefix>* COUNT 1000} until the cursor
     * comes back to 0 (never {@code KEYS}, which blocks the server): one round trip per thousand keys of the whole
     * keyspace, each bounded by {@code timeout}. The names as bytes, as a read-write lock's or a semaphore's hold a
     * byte {@code 0xFF} ({@link RedlockSettings#spaceKey}). A key may show up twice (SCAN's promise).
     */
    CompletableFuture<List<byte[]>> scan(Duration timeout, String prefix) {
        String pattern = globEscaped(prefix) + "*";
        return connected(timeout).thenCompose(c -> scanFrom(c, timeout, pattern, "0", new ArrayList<>()));
    }

    private CompletableFuture<List<byte[]>> scanFrom(
            RedisAsyncCommands<String, String> c, Duration timeout, String pattern, String cursor, List<byte[]> found) {
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8)
                .add(cursor)
                .add("MATCH")
                .add(pattern)
                .add("COUNT")
                .add(SCAN_COUNT);
        // ISO-8859-1 maps every byte to one char: the names come back byte for byte
        return command(c.dispatch(CommandType.SCAN, new KeyScanOutput<>(BYTES_AS_CHARS), args), timeout)
                .thenCompose(page -> {
                    page.getKeys().forEach(k -> found.add(k.getBytes(StandardCharsets.ISO_8859_1)));
                    return page.isFinished() || "0".equals(page.getCursor())
                            ? CompletableFuture.completedFuture(found)
                            : scanFrom(c, timeout, pattern, page.getCursor(), found);
                });
    }

    /** {@code text} with the glob characters of a {@code MATCH} pattern escaped, so that it matches only itself. */
    static String globEscaped(String text) {
        StringBuilder out = new StringBuilder(text.length() + 4);
        for (char ch : text.toCharArray()) {
            if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') {
                out.append('\\');
            }
            out.append(ch);
        }
        return out.toString();
    }

    /** The command connection, connecting first (within {@code timeout}) if need be; fails when closed. */
    private CompletableFuture<RedisAsyncCommands<String, String>> connected(Duration timeout) {
        StatefulRedisConnection<String, String> c = connection;
        if (c != null) {
            return CompletableFuture.completedFuture(c.async());
        }
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("backend closed"));
        }
        return timeouts.bound(connect().copy(), timeout).thenApply(StatefulRedisConnection::async);
    }

    private static CommandArgs<String, String> scriptArgs(String script, List<byte[]> keys, String... args) {
        CommandArgs<String, String> all =
                new CommandArgs<>(StringCodec.UTF8).add(script).add(keys.size());
        keys.forEach(all::add);
        for (String a : args) {
            all.add(a);
        }
        return all;
    }

    /**
     * Connects and checks that we may lock here: the release script on key {@code probeKey} with a value nobody
     * holds, which changes nothing but needs what an ACL user needs for the keys of the prefix and for scripts. Not
     * counted as a request. Completes exceptionally when either fails, with the reason in {@link #lastError()} and,
     * for a refusal, {@link #refusal()}.
     */
    CompletableFuture<Void> connectAndCheck(Duration timeout, String probeKey, String probeValue) {
        String[] keys = {probeKey};
        return connect()
                .thenCompose(c -> bounded(
                                c.async()
                                        .<Long>evalsha(
                                                LuaScript.RELEASE.sha(),
                                                ScriptOutputType.INTEGER,
                                                keys,
                                                probeValue,
                                                ""),
                                timeout)
                        .exceptionallyCompose(error -> unwrap(error) instanceof RedisNoScriptException
                                ? bounded(
                                        c.async()
                                                .<Long>eval(
                                                        LuaScript.RELEASE.body(),
                                                        ScriptOutputType.INTEGER,
                                                        keys,
                                                        probeValue,
                                                        ""),
                                        timeout)
                                : CompletableFuture.failedFuture(error)))
                .whenComplete((reply, error) -> {
                    if (error != null && connection != null) {
                        failed("", error, false);
                    }
                })
                .thenCompose(reply -> checkInfo(timeout));
    }

    /**
     * Reads what the master says of itself ({@code INFO}) and checks two things a lock depends on. A replica is refused
     * (its writes fail with {@code READONLY}; its probe above, which writes nothing, passed): the future fails, with
     * the reason in {@link #refusal()}. A master that evicts keys at its memory limit is warned about: a held lock's
     * key can be evicted, and another locker then takes the lock while its holder still believes it holds it, until
     * the holder's next renewal finds the key gone. A master that does not let us read it (an ACL without {@code
     * INFO}, a managed service that renames it) is neither.
     */
    private CompletableFuture<Void> checkInfo(Duration timeout) {
        StatefulRedisConnection<String, String> c = connection;
        if (c == null) {
            return CompletableFuture.completedFuture(null);
        }
        return bounded(c.async().info(), timeout).handle((info, error) -> {
            if (error != null) {
                log.debug("Could not read INFO of Redis master {}: {}", name, error.toString());
                return null;
            }
            if (isReplica(info)) {
                refusal = Optional.of(RedisFailures.READ_ONLY_REPLICA);
                lastError = RedisFailures.READ_ONLY_REPLICA;
                throw new CompletionException(
                        new LockBackendException(name + " is " + RedisFailures.READ_ONLY_REPLICA));
            }
            evictionPolicy(info)
                    .ifPresent(policy -> log.warn(
                            "Redis master {} evicts keys when it reaches its memory limit (maxmemory-policy {}): the"
                                    + " key of a held lock can be evicted, and another locker then takes the lock while"
                                    + " its holder still believes it holds it, until its next renewal finds the key"
                                    + " gone. Give locks a Redis with maxmemory-policy noeviction (or no maxmemory).",
                            name,
                            policy));
            return null;
        });
    }

    /** Whether a server's {@code INFO} says it is a replica ({@code role:slave}, Redis's word for it). */
    private static boolean isReplica(String info) {
        return infoField(info, "role").filter("slave"::equals).isPresent();
    }

    /**
     * The eviction policy in a master's {@code INFO}, if it evicts keys: a memory limit ({@code maxmemory} above 0) and
     * a policy other than {@code noeviction} (the {@code volatile-} ones evict keys with a time to live first, and
     * every lock's key has one).
     */
    private static Optional<String> evictionPolicy(String info) {
        boolean limited =
                infoField(info, "maxmemory").filter(m -> !m.equals("0")).isPresent();
        return infoField(info, "maxmemory_policy").filter(policy -> limited && !policy.equals("noeviction"));
    }

    /** The value of {@code field} in an {@code INFO} answer ({@code field:value} lines). */
    private static Optional<String> infoField(String info, String field) {
        String prefix = field + ":";
        for (String line : info.split("\\r?\\n")) {
            if (line.startsWith(prefix)) {
                return Optional.of(line.substring(prefix.length()).trim());
            }
        }
        return Optional.empty();
    }

    /**
     * Sends on the connection, or first connects (a master unreachable so far) within {@code timeout}, and turns the
     * reply into a vote. Never completes exceptionally.
     */
    private <T> CompletableFuture<Vote> send(
            Function<RedisAsyncCommands<String, String>, CompletableFuture<T>> command,
            Function<T, Vote> verdict,
            Duration timeout) {
        StatefulRedisConnection<String, String> c = connection;
        CompletableFuture<T> reply;
        if (c != null) {
            reply = command.apply(c.async());
        } else if (closed) {
            reply = CompletableFuture.failedFuture(new IllegalStateException("backend closed"));
        } else {
            // A copy: the connection under way is shared, and each caller's timeout must end only its own wait.
            reply = timeouts.bound(connect().copy(), timeout)
                    .thenCompose(connected -> command.apply(connected.async()));
        }
        return reply.handle((r, error) -> vote(r, error, verdict, timeout));
    }

    /** Counts one round trip and bounds it by {@code timeout}. */
    private <T> CompletableFuture<T> command(RedisFuture<T> sent, Duration timeout) {
        requests.increment();
        return bounded(sent, timeout);
    }

    private <T> Vote vote(T reply, Throwable error, Function<T, Vote> verdict, Duration timeout) {
        if (error == null) {
            return verdict.apply(reply);
        }
        Throwable cause = unwrap(error);
        refusedForGood = RedisFailures.lasts(cause);
        if (cause instanceof TimeoutException) {
            lastError = "no answer within " + timeout.toMillis() + "ms";
        } else {
            failed("", cause, false);
            if (RedisFailures.isReadOnly(cause)) {
                reconnect();
            }
        }
        return Vote.FAILED;
    }

    /**
     * Drops the command connection, so that the next command connects anew: the server at the other end was demoted to
     * a replica, and the master's address may now lead to another server (a managed Redis moves its name to the
     * replica it promotes, and a connection made before stays with the old server for ever). Commands in flight on
     * the old connection fail; none was taken by a replica.
     */
    private void reconnect() {
        StatefulRedisConnection<String, String> dropped;
        synchronized (connectLock) {
            dropped = connection;
            connection = null;
        }
        if (dropped != null) {
            log.info("{} answered as a read-only replica: connecting to its address again", name);
            dropped.closeAsync();
        }
    }

    /**
     * A copy of the command's future, failed with a {@link TimeoutException} after {@code timeout}: the command itself
     * stays Lettuce's until the master answers or the connection drops.
     */
    private <T> CompletableFuture<T> bounded(RedisFuture<T> command, Duration timeout) {
        CompletableFuture<T> copy = new CompletableFuture<>();
        command.whenComplete((v, e) -> {
            if (e != null) {
                copy.completeExceptionally(e);
            } else {
                copy.complete(v);
            }
        });
        return timeouts.bound(copy, timeout);
    }

    /**
     * Opens this master's pub/sub connection once, delivering each message of {@code channel} to {@code onMessage};
     * later calls return the same connection, or open it again after a failure. Subscribes to nothing: see {@link
     * #subscribe}.
     */
    CompletableFuture<StatefulRedisPubSubConnection<String, String>> openPubSub(
            String channel, Consumer<String> onMessage) {
        synchronized (connectLock) {
            if (pubSubOpened != null && !pubSubOpened.isCompletedExceptionally()) {
                return pubSubOpened;
            }
            pubSubOpened = connector.connectPubSub().thenApply(c -> {
                synchronized (connectLock) {
                    if (closed) {
                        connector.discard(c);
                        throw new CompletionException(new IllegalStateException("closed"));
                    }
                    pubSub = c;
                }
                c.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String ch, String message) {
                        if (channel.equals(ch)) {
                            onMessage.accept(message);
                        }
                    }
                });
                return c;
            });
            pubSubOpened.whenComplete((c, e) -> {
                if (e != null) {
                    subscribeFailed(channel, e);
                }
            });
            return pubSubOpened;
        }
    }

    /**
     * Subscribes the pub/sub connection ({@link #openPubSub}, opened if need be) to {@code channel}, unless it is
     * subscribed or subscribing: completes when the master confirmed. Lettuce subscribes again by itself after a
     * reconnection.
     */
    CompletableFuture<Void> subscribe(String channel, Consumer<String> onMessage) {
        synchronized (connectLock) {
            if (subscription != null && !subscription.isCompletedExceptionally()) {
                return subscription;
            }
            subscription = openPubSub(channel, onMessage).thenCompose(c -> {
                requests.increment();
                return c.async().subscribe(channel).toCompletableFuture();
            });
            subscription.whenComplete((v, e) -> {
                if (e != null) {
                    subscribeFailed(channel, e);
                }
            });
            return subscription;
        }
    }

    /**
     * The subscription to the release channel as it stands: completed when the master confirmed it, exceptionally
     * when it failed; null when none was asked for since the last {@link #unsubscribe}.
     */
    CompletableFuture<Void> subscription() {
        synchronized (connectLock) {
            return subscription;
        }
    }

    /**
     * Unsubscribes from {@code channel} if subscribed; a subscription still under way is left as it is. Sent on the
     * connection in order with the subscriptions, so a {@link #subscribe} after this one is the master's last word.
     */
    void unsubscribe(String channel) {
        synchronized (connectLock) {
            CompletableFuture<Void> s = subscription;
            StatefulRedisPubSubConnection<String, String> c = pubSub;
            if (s == null || !s.isDone() || s.isCompletedExceptionally() || c == null || closed) {
                return;
            }
            subscription = null;
            requests.increment();
            c.async().unsubscribe(channel);
        }
    }

    private void subscribeFailed(String channel, Throwable e) {
        if (closed) {
            return; // closed while the pub/sub connection was opening: nothing failed that anybody waits for
        }
        failed("cannot subscribe: ", e, true);
        if (refusal.isPresent()) {
            log.warn("Release messages from {} are not heard, waiters there poll instead: {}", name, refusal.get());
        } else {
            log.debug("Subscribing to {} on {} failed: {}", channel, name, e.toString());
        }
    }

    @Override
    public void close() {
        CompletableFuture<Void> sub;
        synchronized (connectLock) {
            closed = true;
            sub = subscription;
        }
        if (sub != null) {
            sub.cancel(false);
        }
        StatefulRedisPubSubConnection<String, String> p;
        StatefulRedisConnection<String, String> c;
        synchronized (connectLock) {
            p = pubSub;
            c = connection;
            pubSub = null;
            connection = null;
        }
        if (p != null) {
            p.close();
        }
        if (c != null) {
            c.close();
        }
        connector.close();
    }

    /** Remembers a failure for messages, named as a refusal when it is one. */
    private void failed(String context, Throwable e, boolean connecting) {
        Optional<String> refused = RedisFailures.describe(e, keyPrefix, connecting);
        if (refused.isPresent()) {
            refusal = refused;
        }
        lastError = context + refused.orElseGet(() -> rootMessage(e));
    }

    static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = unwrap(e);
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }

    @Override
    public String toString() {
        return name;
    }
}
