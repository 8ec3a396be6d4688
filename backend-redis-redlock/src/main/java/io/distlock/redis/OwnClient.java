package io.distlock.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** A Lettuce client of distlock's own for one master, made from the locker's URI and options; closed with it. */
final class OwnClient implements Connector {

    private final RedisClient client;
    private final RedisURI uri;

    OwnClient(RedisURI uri, ClientOptions options, ClientResources resources) {
        this.uri = uri;
        this.client = RedisClient.create(resources, uri);
        client.setOptions(options);
    }

    @Override
    public CompletableFuture<StatefulRedisConnection<String, String>> connect() {
        return client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture();
    }

    @Override
    public CompletableFuture<StatefulRedisPubSubConnection<String, String>> connectPubSub() {
        return client.connectPubSubAsync(StringCodec.UTF8, uri).toCompletableFuture();
    }

    /**
     * Nothing: {@link #close()}, which the master calls after it, shuts the client down, which closes every connection
     * the client made; one made later goes with the resources' I/O threads ({@link OwnResources}). Closed here too, a
     * connection made as the master closed was closed twice.
     */
    @Override
    public void discard(StatefulConnection<String, String> connection) {}

    @Override
    public void close() {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
}
