package io.distlock.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * One master reached through the application's own Lettuce client, with its options, TLS, credentials and resources:
 * to the given {@link RedisURI}, or to the client's default one. Closing closes the connections distlock opened
 * (done by {@link Master}), never the client.
 */
final class ApplicationClient implements Connector {

    /**
     * Lettuce connects to a client's default URI only by blocking calls: each runs on a short-lived thread of its own
     * (opening, a master down at opening, the first wait), never on a Lettuce or caller thread.
     */
    private static final Executor CONNECT_THREADS = command -> {
        Thread t = new Thread(command, "distlock-redis-connect");
        t.setDaemon(true);
        t.start();
    };

    private final RedisClient client;
    private final Optional<RedisURI> uri;

    ApplicationClient(RedisClient client, Optional<RedisURI> uri) {
        this.client = client;
        this.uri = uri;
    }

    @Override
    public CompletableFuture<StatefulRedisConnection<String, String>> connect() {
        if (uri.isPresent()) {
            return client.connectAsync(StringCodec.UTF8, uri.get()).toCompletableFuture();
        }
        return blocking(() -> client.connect(StringCodec.UTF8));
    }

    @Override
    public CompletableFuture<StatefulRedisPubSubConnection<String, String>> connectPubSub() {
        if (uri.isPresent()) {
            return client.connectPubSubAsync(StringCodec.UTF8, uri.get()).toCompletableFuture();
        }
        return blocking(() -> client.connectPubSub(StringCodec.UTF8));
    }

    private static <T> CompletableFuture<T> blocking(Supplier<T> connect) {
        return CompletableFuture.supplyAsync(connect, CONNECT_THREADS);
    }

    /** Closes it: the client, the application's, is not shut down with the locker. */
    @Override
    public void discard(StatefulConnection<String, String> connection) {
        connection.closeAsync();
    }

    /** Nothing: the client is the application's. */
    @Override
    public void close() {}
}
