package io.distlock.redis;

import io.distlock.kit.CrossProcessExclusionContract;
import io.distlock.kit.LeaseContract;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The kit's exclusion and lease contracts and its exclusion across worker processes (`CrossProcessExclusionContract`) over secured connections ({@link SecuredRedis}): TLS with
 * a client certificate, ACL user {@value SecuredRedis#LOCKER} with its password read from a file, all given as query
 * options, so that worker processes open the same URI.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
abstract class SecuredKit implements MutualExclusionContract, LeaseContract, CrossProcessExclusionContract {

    private final RedisServers servers;
    private final TestPki pki;
    private final String options;

    SecuredKit(RedisServers servers, TestPki pki) {
        this.servers = servers;
        this.pki = pki;
        this.options = SecuredRedis.lockerOptions(pki);
    }

    /** The options that reach the servers as {@value SecuredRedis#LOCKER}; no secret in them. */
    String options() {
        return options;
    }

    @Override
    public Optional<List<String>> storeEntries(String key) {
        try (RedisProbe probe = SecuredRedis.probe(servers, pki)) {
            return Optional.of(RedisConformanceTest.entries(probe.keys("distlock:" + key)));
        }
    }
}
