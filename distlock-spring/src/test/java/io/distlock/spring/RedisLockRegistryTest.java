package io.distlock.spring;

import io.distlock.testing.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The registry on a real Redis server (a lease-renewed backend: a loss is noticed at the next renewal). */
class RedisLockRegistryTest extends LockRegistryContract {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().build();

    @Override
    String uri() {
        return "redis://" + REDIS.endpoints().get(0) + "?ttl=3s";
    }

    @Override
    void deleteBehindHolder(String key) {
        RedisClient client = RedisClient.create("redis://" + REDIS.endpoints().get(0));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            if (connection.sync().del("distlock:" + key) != 1) {
                throw new AssertionError("no Redis entry for " + key);
            }
        } finally {
            client.shutdown();
        }
    }
}
