package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** The README's example, built as a user builds it, against memory: and two real stores in one JVM. */
class TransfersTest {

    @Test
    void readmeExample_isThisFile_asPasted() throws Exception {
        String readme = Files.readString(Path.of(System.getProperty("readme")));
        int use = readme.indexOf("## Use it");
        int start = readme.indexOf("```java\n", use) + "```java\n".length();
        String snippet = readme.substring(start, readme.indexOf("```", start));
        String source = Files.readString(Path.of("src/main/java/example/Transfers.java"));
        assertEquals(snippet.strip(), source.strip(), "the README's example and the sample's Transfers.java differ");
    }

    @Test
    void readmeExample_runsOnMemory() throws Exception {
        Transfers.main(new String[] {"memory:"});
    }

    @Test
    void readmeExample_runsOnZooKeeper_besideMemory() throws Exception {
        try (TestingServer zk = new TestingServer();
                RemoteLocker memory = RemoteLockers.open("memory://beside")) {
            Transfers.main(new String[] {"zk://" + zk.getConnectString() + "/locks?ttl=10s"});
            try (RemoteLocker locker = RemoteLockers.open("zk://" + zk.getConnectString() + "/locks");
                    RemoteLock held = memory.lock("account:42", Duration.ofSeconds(5))) {
                Optional<RemoteLock> lock = locker.tryLock("account:42");
                assertTrue(lock.isPresent(), "ZooKeeper and memory: are separate stores");
                lock.get().close();
            }
        }
    }

    @Test
    void readmeExample_runsOnRedis_besideZooKeeper() throws Exception {
        try (RedisServer redis = RedisServer.start();
                TestingServer zk = new TestingServer();
                RemoteLocker zkLocker = RemoteLockers.open("zk://" + zk.getConnectString() + "/locks")) {
            Transfers.main(new String[] {"redis://" + redis.address() + "?ttl=10s"});
            try (RemoteLocker redisLocker = RemoteLockers.open("redis://" + redis.address());
                    RemoteLocker otherRedisLocker = RemoteLockers.open("redis://" + redis.address());
                    RemoteLock onZk = zkLocker.lock("account:42", Duration.ofSeconds(5));
                    RemoteLock onRedis = redisLocker.lock("account:42", Duration.ofSeconds(5))) {
                assertTrue(onZk.isHeld() && onRedis.isHeld(), "one key in two stores, both held");
                assertTrue(otherRedisLocker.tryLock("account:42").isEmpty(), "Redis excludes a second owner");
            }
        }
    }

    /** The BOM aligns every Netty module to the version distlock is tested with, also the ones ZooKeeper asks 4.1 of. */
    @Test
    void netty_isTheBomsVersion() {
        String expected = System.getProperty("expected.netty.version");
        io.netty.util.Version.identify().forEach((artifact, version) -> assertEquals(
                expected, version.artifactVersion(), "Netty module " + artifact + " on the user's classpath"));
        assertTrue(
                io.netty.util.Version.identify().containsKey("netty-common"), "Netty is on the classpath through ZooKeeper");
    }
}
