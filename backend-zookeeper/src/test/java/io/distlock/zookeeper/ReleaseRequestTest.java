package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockHolder;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Release requests on one real server: a rewrite of the holder node's data (same bytes, next version) reaches the
 * holder through the watch on its own node, once per request, also when written before that watch was set; the node's
 * data (the owner id inspection shows) stays as it was.
 */
@Timeout(120)
class ReleaseRequestTest {

    private static final Logger log = LoggerFactory.getLogger(ReleaseRequestTest.class);
    private static final String BASE = "/release-requests";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static TestingServer server;
    private static CuratorFramework raw;
    private static RemoteLocker holder;
    private static RemoteLocker asker;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
        raw = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        raw.start();
        raw.blockUntilConnected();
        holder = RemoteLockers.open("zk://" + server.getConnectString() + BASE);
        asker = RemoteLockers.open("zk://" + server.getConnectString() + BASE);
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {asker, holder, raw, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static String onlyNode(String key) throws Exception {
        String path = ZKPaths.makePath(BASE, KeyCodec.encode(key));
        List<String> children = raw.getChildren().forPath(path);
        assertThat(children).hasSize(1);
        return ZKPaths.makePath(path, children.get(0));
    }

    /**
     * Five requests, each after the previous one was heard: each runs the listener once, and the time from the
     * request's call to the listener is logged (median, max) as the bound measured on one server.
     */
    @Test
    void requestRelease_reachesTheHolderOncePerRequest_leavingItsNodesDataAsIs() throws Exception {
        BlockingQueue<Long> heard = new LinkedBlockingQueue<>();
        try (RemoteLock lock = holder.lock("rr/measured", WAIT)) {
            lock.onReleaseRequested(l -> heard.add(System.nanoTime()));
            Thread.sleep(300); // past the locker's deferred pass, so the watch on the node is set
            String node = onlyNode("rr/measured");
            byte[] before = raw.getData().forPath(node);
            List<Long> micros = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                long asked = System.nanoTime();
                List<LockHolder> holders = asker.requestRelease("rr/measured");
                assertThat(holders).extracting(LockHolder::ownerId).containsExactly(lock.ownerId());
                Long at = heard.poll(TestTimeouts.scaled(Duration.ofSeconds(2)).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(at).as("listener run for request %d", i + 1).isNotNull();
                micros.add(TimeUnit.NANOSECONDS.toMicros(at - asked));
            }
            Thread.sleep(200);
            assertThat(heard).as("listener runs beyond one per request").isEmpty();
            assertThat(raw.getData().forPath(node)).isEqualTo(before);
            assertThat(holder.inspect("rr/measured").holders())
                    .extracting(LockHolder::ownerId)
                    .containsExactly(lock.ownerId());
            assertThat(lock.isHeld()).isTrue();
            List<Long> sorted = new ArrayList<>(micros);
            Collections.sort(sorted);
            log.info(
                    "Release request to listener on one ZooKeeper server, 5 requests (us): {}; median {} us, max {} us",
                    micros,
                    sorted.get(2),
                    sorted.get(4));
        }
    }

    /**
     * A request written in the moment after the grant, before the locker's deferred pass sets the watch on the node,
     * is read from the node's data version when the watch is set: heard once, not lost.
     */
    @Test
    void requestRelease_rightAfterTheGrant_beforeTheNodeIsWatched_isHeardOnce() throws Exception {
        AtomicInteger heard = new AtomicInteger();
        try (RemoteLock lock = holder.lock("rr/early", WAIT)) {
            assertThat(asker.requestRelease("rr/early")).hasSize(1);
            assertThat(asker.requestRelease("rr/early")).hasSize(1);
            lock.onReleaseRequested(l -> heard.incrementAndGet());
            long until = System.nanoTime()
                    + TestTimeouts.scaled(Duration.ofSeconds(2)).toNanos();
            while (heard.get() < 2 && System.nanoTime() - until < 0) {
                Thread.sleep(10);
            }
            Thread.sleep(200);
            assertThat(heard.get()).isEqualTo(2);
            assertThat(lock.isHeld()).isTrue();
        }
    }

    /** A free key: nothing asked, nothing written, and its next holder hears no request. */
    @Test
    void requestRelease_onAFreeKey_asksNobody_andReachesNoLaterHolder() throws Exception {
        try (RemoteLock first = holder.lock("rr/free", WAIT)) {
            assertThat(first.isHeld()).isTrue();
        }
        assertThat(asker.requestRelease("rr/free")).isEmpty();
        AtomicInteger heard = new AtomicInteger();
        try (RemoteLock later = holder.lock("rr/free", WAIT)) {
            later.onReleaseRequested(l -> heard.incrementAndGet());
            Thread.sleep(500); // the watch is set, and its first answer read
            assertThat(new String(raw.getData().forPath(onlyNode("rr/free")), StandardCharsets.UTF_8))
                    .isEqualTo(later.ownerId());
        }
        assertThat(heard.get()).isZero();
    }
}
