package io.distlock.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.concurrent.CompletableFuture;

/**
 * Makes the connections to one master: through a Lettuce client distlock created from the URI and options ({@link
 * OwnClient}), or through the application's own client ({@link ApplicationClient}). Either way the pub/sub connection
 * has the same host, TLS and credentials as the command connection.
 */
interface Connector {

    /** Opens a command connection; completes exceptionally if the master cannot be reached or refuses us. */
    CompletableFuture<StatefulRedisConnection<String, String>> connect();

    /** Opens a pub/sub connection to the same master, with the same settings. */
    CompletableFuture<StatefulRedisPubSubConnection<String, String>> connectPubSub();

    /**
     * Disposes of a connection that was made after its master closed. A connection is closed once: Lettuce logs
     * "Connection is already closed" (WARN) for a second close.
     */
    void discard(StatefulConnection<String, String> connection);

    /** Releases what this connector created; never the application's client. */
    void close();
}
