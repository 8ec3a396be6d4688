package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.api.CuratorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the client's ZooKeeper session and tells the held locks what happens to it.
 *
 * <ul>
 *   <li>A heartbeat (a {@code sync}, which a follower passes through the leader, every sixth of the session timeout)
 *       records the send time of requests the server answered, which moves each lock's validity on once the leader
 *       surely heard of them (see {@link ZkSession}). The client's connection events are counted in ZooKeeper's
 *       event thread, in order with the answers, so that an answer is known to come over the same connection as an
 *       earlier one.
 *   <li>{@code SUSPENDED}: the locks are uncertain; nothing moves their validity on, so they turn not-held when the
 *       session may have expired on the server, even if {@code LOST} never comes.
 *   <li>{@code LOST} (the session expired, or Curator gave up after a session timeout without connection): every lock
 *       of the session is lost and its owner told once.
 *   <li>{@code RECONNECTED} with the same session: the locks are checked to still exist; with a new session: the old
 *       one's locks are lost.
 * </ul>
 *
 * Waiting acquisitions register a wake-up here, so that a change of state makes them look at the queue again.
 */
final class SessionWatch implements ConnectionStateListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SessionWatch.class);
    private static final long MIN_HEARTBEAT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Added to half a tick: the leader's ping loop and the follower's answer take a moment beyond the period. */
    private static final long REPORT_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** ZooKeeper's default {@code tickTime}. */
    private static final long DEFAULT_TICK_NANOS = TimeUnit.SECONDS.toNanos(3);

    private final CuratorFramework client;
    /** The client whose event listeners hear the connection's events: {@link #client}, or the one its facade wraps. */
    private final CuratorFramework eventSource;

    private final String connectString;
    private final long requestedTimeoutNanos;
    private final Ticker ticker;
    private final AtomicReference<ZkSession> current = new AtomicReference<>();
    private final Set<Runnable> wakeUps = ConcurrentHashMap.newKeySet();
    private final Set<PendingDelete> pendingDeletes = ConcurrentHashMap.newKeySet();

    private volatile boolean lostState;
    private final ScheduledExecutorService heartbeat;
    /** The send reading of the latest heartbeat, and of the latest answered one ({@link ZkSession#NONE}: none). */
    private volatile long lastBeatSentNanos = ZkSession.NONE;

    private volatile long lastBeatAnsweredNanos = ZkSession.NONE;
    /** Whether the heartbeats go unanswered now; see {@link #keepAliveFailing}. */
    private final java.util.concurrent.atomic.AtomicBoolean beatsFailing =
            new java.util.concurrent.atomic.AtomicBoolean();

    private volatile boolean closed;
    /** Requests sent for the locks (shared with {@link ZkCalls}); the heartbeat's are not counted. */
    private final AtomicLong requests;
    /** The ensemble's tick, if given (see {@link #reportLagNanos}). */
    private final Optional<Duration> tickTime;
    /** Counts the connections: moved on by every disconnection, in ZooKeeper's event thread. */
    private final AtomicLong connections = new AtomicLong();
    /** The reading at the latest disconnection or expiry since the last connection (NONE while connected). */
    private final AtomicLong droppedAtNanos = new AtomicLong(ZkSession.NONE);
    /** The session current when the connection dropped: a session seen after it is new. */
    private volatile long sessionAtDrop;
    /** For a session created after a disconnection: a reading before it was created (see {@link ZkSession}). */
    private final Map<Long, Long> floors = new ConcurrentHashMap<>();

    private final CuratorListener connectionEvents = this::connectionEvent;
    /** The floor of the first session seen (see the constructor). */
    private final long initialFloor;

    /**
     * @param tickTime the ensemble's {@code tickTime}, if given (see {@link #reportLagNanos} for without)
     * @param startedNanos a reading taken before the client began connecting (the floor of its first session), or
     *     {@link ZkSession#NONE} for a client connected before (an application's): its first session is then
     *     confirmed by heartbeats when this starts
     */
    SessionWatch(
            CuratorFramework client,
            String connectString,
            long requestedTimeoutNanos,
            Optional<Duration> tickTime,
            long startedNanos,
            Ticker ticker,
            AtomicLong requests) {
        this.client = client;
        this.eventSource = eventSource(client);
        this.requests = requests;
        this.connectString = connectString;
        this.requestedTimeoutNanos = requestedTimeoutNanos;
        this.tickTime = tickTime;
        this.ticker = ticker;
        this.initialFloor = startedNanos;
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "distlock-zookeeper-heartbeat");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts following the session; call once connected. A session whose creation this client did not see (an
     * application's client) is confirmed first, by heartbeats half a tick apart; so is one whose guarantee from its
     * creation has less than half the session timeout left, as when connecting took longer than the session timeout
     * (the store out of reach at first, connection attempts turned away): the locker's first grants would otherwise be
     * refused as stale until the heartbeats caught up.
     *
     * @throws LockBackendException if that does not happen within {@code timeout} plus a tick
     */
    void start(Duration timeout) {
        eventSource.getCuratorListenable().addListener(connectionEvents);
        client.getConnectionStateListenable().addListener(this);
        long started = ticker.read();
        ZkSession first = observe();
        if (first != null) {
            sessionAtDrop = first.id();
        }
        beat();
        if (first != null && (!first.isConfirmed() || first.guaranteedUntil() - started < first.timeoutNanos() / 2)) {
            confirm(first, started, timeout);
        }
    }

    /** Waits until a send of {@code session} made at or after reading {@code since} is confirmed. */
    private void confirm(ZkSession session, long since, Duration timeout) {
        long start = ticker.read();
        long pause = Math.max(MIN_HEARTBEAT_NANOS, reportLagNanos(session.timeoutNanos()) / 2);
        while (!session.isConfirmedSince(since)) {
            if (ticker.read() - start > timeout.toNanos() + 2 * reportLagNanos(session.timeoutNanos())
                    || session.isLost()) {
                throw new LockBackendException("ZooKeeper at " + connectString + " did not confirm " + session
                        + " within " + DurationText.of(timeout)
                        + " and a tick (two answered syncs half a tick apart; options connectTimeout, tickTime)");
            }
            heartbeat.execute(this::beatOnce);
            try {
                TimeUnit.NANOSECONDS.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("Interrupted while confirming the ZooKeeper " + session, e);
            }
        }
    }

    /**
     * The client to listen to for the connection's events. A namespace facade ({@code client.usingNamespace("app")},
     * how applications share one client) refuses {@code getCuratorListenable()}, though the events are those of the
     * client it wraps, whose public {@code client()} Curator declares on a class of its own package: it is reached by
     * reflection.
     *
     * @throws LockBackendException if the facade's client cannot be reached (a Curator other than 5.x)
     */
    private static CuratorFramework eventSource(CuratorFramework client) {
        try {
            client.getCuratorListenable();
            return client;
        } catch (UnsupportedOperationException facade) {
            try {
                java.lang.reflect.Method wrapped = client.getClass().getMethod("client");
                wrapped.setAccessible(true);
                CuratorFramework inner = (CuratorFramework) wrapped.invoke(client);
                inner.getCuratorListenable();
                return inner;
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw new LockBackendException(
                        "Cannot follow the connection of the namespaced ZooKeeper client (" + facade.getMessage()
                                + ", and the client it wraps is out of reach: " + e + "); give ZooKeeperLockers.using"
                                + " the client itself, with the namespace in the base path",
                        e);
            }
        }
    }

    /**
     * Half the tick: the longest a follower takes to tell the leader it heard from a session. Without the {@code
     * tickTime} option, the tick is taken as ZooKeeper's default of 3 s, or half the session timeout if less (the
     * server grants no session shorter than two ticks unless its {@code minSessionTimeout} says otherwise).
     */
    private long reportLagNanos(long sessionTimeoutNanos) {
        long tick = tickTime.map(Duration::toNanos).orElse(Math.min(DEFAULT_TICK_NANOS, sessionTimeoutNanos / 2));
        return tick / 2 + REPORT_MARGIN_NANOS;
    }

    /**
     * Runs in ZooKeeper's event thread, in order with the answers to requests: counts disconnections, and gives a
     * session created after one the reading of the last disconnection or expiry before it as its floor.
     */
    private void connectionEvent(CuratorFramework c, CuratorEvent event) {
        if (event.getType() != CuratorEventType.WATCHED
                || event.getWatchedEvent() == null
                || event.getWatchedEvent().getType() != Watcher.Event.EventType.None) {
            return;
        }
        Watcher.Event.KeeperState state = event.getWatchedEvent().getState();
        if (state != Watcher.Event.KeeperState.SyncConnected) {
            connections.incrementAndGet();
            if (state != Watcher.Event.KeeperState.Closed) {
                // The latest such reading: a new session's handle is made after its predecessor's Expired event (or
                // its last disconnection), so this reading comes before the new session's creation. A Closed event is
                // an old handle's, and may come after that creation, from that handle's own event thread.
                ZkSession before = current.get();
                sessionAtDrop = before == null ? 0 : before.id();
                droppedAtNanos.set(ticker.read());
            }
            return;
        }
        connections.incrementAndGet();
        long dropped = droppedAtNanos.getAndSet(ZkSession.NONE);
        ZooKeeper zk = handleOrNull();
        if (dropped == ZkSession.NONE || zk == null) {
            return;
        }
        long id = zk.getSessionId();
        if (id != 0 && id != sessionAtDrop) {
            // created by this connection, so after the drop
            floors.putIfAbsent(id, dropped);
            ZkSession s = current.get();
            if (s != null && s.id() == id) {
                s.confirmFloor(dropped);
            }
        }
    }

    /**
     * The session that owns a node whose {@code ephemeralOwner} is {@code sessionId}, if it is this client's live
     * session; null if that session is gone.
     */
    ZkSession owning(long sessionId) {
        ZkSession s = observe();
        if (s != null && s.id() == sessionId && !s.isLost()) {
            return s;
        }
        return null;
    }

    /** Whether the client is connected now. */
    boolean isConnected() {
        return client.getZookeeperClient().isConnected();
    }

    String connectString() {
        return connectString;
    }

    /** Whether Curator reported the session lost and no connection has come back since. */
    boolean isLost() {
        return lostState;
    }

    /** A queue node that could not be deleted when its attempt ended. */
    private record PendingDelete(String lockPath, String protectionId) {}

    /**
     * Deletes the node of the attempt with {@code protectionId} under {@code lockPath} once the connection is back in
     * the same session (in a new session the node is gone with the old one).
     */
    void deleteLater(String lockPath, String protectionId) {
        pendingDeletes.add(new PendingDelete(lockPath, protectionId));
        if (isConnected()) {
            deletePending();
        }
    }

    private void deletePending() {
        for (PendingDelete pending : pendingDeletes) {
            try {
                requests.incrementAndGet();
                client.getChildren()
                        .inBackground((c, event) -> {
                            if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                                pendingDeletes.remove(pending);
                                return;
                            }
                            if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                                return; // tried again at the next reconnection
                            }
                            pendingDeletes.remove(pending);
                            ZkCalls.findProtected(event.getChildren(), pending.protectionId())
                                    .ifPresent(name -> deleteInBackground(ZKPaths.makePath(pending.lockPath(), name)));
                        })
                        .forPath(pending.lockPath());
            } catch (Exception e) {
                log.debug("Could not list {} to delete a left-over queue node: {}", pending.lockPath(), e.toString());
            }
        }
    }

    /** Deletes {@code path} without waiting; Curator's guaranteed delete retries it after a reconnection. */
    void deleteInBackground(String path) {
        try {
            requests.incrementAndGet();
            client.delete().guaranteed().inBackground().forPath(path);
        } catch (Exception e) {
            log.debug("Could not delete {}: {}", path, e.toString());
        }
    }

    /**
     * Fails once the backend is closed, so that a wait for the connection cannot outlive the client.
     *
     * @throws io.distlock.LockBackendException if closed
     */
    void checkOpen() {
        if (closed) {
            throw new io.distlock.LockBackendException("The ZooKeeper backend for " + connectString + " is closed");
        }
    }

    /**
     * Watches the node of a lock still held a moment after its grant ({@link ZkLease#onStillHeld}, called by the
     * locker's deferred pass at most 200 ms after the grant): if it is deleted by anyone but its holder (an
     * administrator, a script), or is already gone, the lock is lost at once. A lock released within that moment (the
     * common case of a short critical section) costs no request and no event: the watch, its answer and the deletion
     * event of our own release would add a third to an uncontended acquire + release. Our own release forgets the
     * lease before deleting the node, so that deletion is not reported. The watch survives reconnections in the same
     * session; an expiry loses the lock anyway.
     *
     * <p>The same watch carries release requests: a change of the node's data ({@code NodeDataChanged}) sets the watch
     * again, and each answer's stat tells the lease the data version ({@link ZkLease#dataVersionRead}), whose every
     * step since the node's creation is one request. A request written before the watch was set (in the moment after
     * the grant) is read from the first answer's version, so none is missed and none is told twice.
     */
    void watchOwned(ZkLease lease) {
        if (lease.session().holds(lease)) {
            watchNow(lease);
        }
    }

    private void watchNow(ZkLease lease) {
        org.apache.zookeeper.Watcher watcher = event -> {
            if (event.getType() == org.apache.zookeeper.Watcher.Event.EventType.NodeDeleted) {
                ownedNodeGone(lease);
            } else if (event.getType() != org.apache.zookeeper.Watcher.Event.EventType.None
                    && lease.session().holds(lease)) {
                watchNow(lease); // its data changed (a release request): keep watching, and read the version
            }
        };
        try {
            requests.incrementAndGet();
            client.checkExists()
                    .usingWatcher(watcher)
                    .inBackground((c, event) -> {
                        // a node already gone answers NONODE (asynchronous exists) rather than OK without a stat
                        if (event.getResultCode() == KeeperException.Code.NONODE.intValue()
                                || (event.getResultCode() == KeeperException.Code.OK.intValue()
                                        && event.getStat() == null)) {
                            ownedNodeGone(lease);
                        } else if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                            lease.dataVersionRead(event.getStat().getVersion());
                        }
                    })
                    .forPath(lease.nodePath());
        } catch (Exception e) {
            log.debug("Could not watch lock node {}: {}", lease.nodePath(), e.toString());
        }
    }

    private void ownedNodeGone(ZkLease lease) {
        ZkSession s = lease.session();
        if (s.holds(lease)) {
            s.forget(lease);
            lease.lose(ticker.read(), "its lock node " + lease.nodePath() + " was deleted by someone else");
        }
    }

    void addWakeUp(Runnable wakeUp) {
        wakeUps.add(wakeUp);
    }

    void removeWakeUp(Runnable wakeUp) {
        wakeUps.remove(wakeUp);
    }

    @Override
    public void stateChanged(CuratorFramework c, ConnectionState state) {
        switch (state) {
            case SUSPENDED, READ_ONLY -> {
                ZkSession s = current.get();
                int held = s == null ? 0 : s.leases().size();
                log.warn(
                        "Connection to ZooKeeper at {} suspended; {} held lock(s) are uncertain until it returns",
                        connectString,
                        held);
                if (s != null) {
                    keepAliveFailing(s, true);
                }
            }
            case LOST -> {
                lostState = true;
                ZkSession s = current.get();
                ZooKeeper zk = handleOrNull();
                boolean stale = s != null && zk != null && zk.getState().isConnected() && zk.getSessionId() == s.id();
                if (s != null && !stale) {
                    lose(s, "the ZooKeeper " + s + " was lost (expired, or no connection for its timeout)");
                }
            }
            case CONNECTED, RECONNECTED -> {
                lostState = false;
                ZkSession before = current.get();
                ZkSession now = observe();
                if (now != null && before == now) {
                    verifyNodes(now);
                    deletePending();
                } else {
                    pendingDeletes.clear(); // a new session: the old session's nodes are gone with it
                }
                heartbeat.execute(this::beatOnce);
            }
        }
        wakeAll();
    }

    /** Reads the live handle's session; a new session id replaces (and loses) the previous session. */
    private ZkSession observe() {
        ZooKeeper zk = handleOrNull();
        if (zk == null || !zk.getState().isConnected()) {
            return current.get();
        }
        long id = zk.getSessionId();
        int timeoutMs = zk.getSessionTimeout();
        if (id == 0 || timeoutMs <= 0) {
            return current.get();
        }
        while (true) {
            ZkSession known = current.get();
            if (known != null && known.id() == id) {
                return known;
            }
            long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            long floor = floors.getOrDefault(id, known == null ? initialFloor : ZkSession.NONE);
            ZkSession fresh = new ZkSession(id, timeoutNanos, reportLagNanos(timeoutNanos), floor, ticker.read());
            if (current.compareAndSet(known, fresh)) {
                if (known != null) {
                    lose(known, "the ZooKeeper " + known + " ended; the client is now in " + fresh);
                }
                long requestedMs = TimeUnit.NANOSECONDS.toMillis(requestedTimeoutNanos);
                if (Math.abs(timeoutMs - requestedMs) > 1) {
                    log.warn(
                            "ZooKeeper at {} granted a session timeout of {} ms instead of the {} ms asked for (the"
                                    + " server bounds it by its minSessionTimeout/maxSessionTimeout); locks of a"
                                    + " crashed holder are freed after {} ms",
                            connectString,
                            timeoutMs,
                            requestedMs,
                            timeoutMs);
                }
                log.debug("ZooKeeper {} established with {} (timeout {} ms)", fresh, connectString, timeoutMs);
                return fresh;
            }
        }
    }

    private void lose(ZkSession s, String reason) {
        int held = s.leases().size();
        s.markLost(ticker.read(), reason);
        if (held > 0) {
            log.warn("{}: {} held lock(s) lost", reason, held);
        }
    }

    /** After a reconnection in the same session: a lock whose node is gone (deleted by hand) is lost. */
    private void verifyNodes(ZkSession s) {
        for (ZkLease lease : s.leases()) {
            try {
                requests.incrementAndGet();
                client.checkExists()
                        .inBackground((c, event) -> {
                            if (event.getResultCode() == KeeperException.Code.NONODE.intValue()
                                    || (event.getResultCode() == KeeperException.Code.OK.intValue()
                                            && event.getStat() == null)) {
                                ownedNodeGone(lease);
                            } else if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                                lease.dataVersionRead(event.getStat().getVersion());
                            }
                        })
                        .forPath(lease.nodePath());
            } catch (Exception e) {
                log.debug("Could not check lock node {}: {}", lease.nodePath(), e.toString());
            }
        }
    }

    private void beat() {
        beatOnce();
        if (closed) {
            return;
        }
        ZkSession s = current.get();
        long period = Math.max(MIN_HEARTBEAT_NANOS, (s == null ? requestedTimeoutNanos : s.timeoutNanos()) / 6);
        try {
            heartbeat.schedule(this::beat, period, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    /**
     * Sends one {@code sync} and, when the server answers, credits its send time to the session it was sent in, on the
     * connection it came over (see {@link ZkSession#answered}).
     */
    private void beatOnce() {
        ZooKeeper zk = handleOrNull();
        ZkSession current = this.current.get();
        if (zk == null || !zk.getState().isConnected()) {
            if (current != null) {
                keepAliveFailing(current, true);
            }
            return;
        }
        ZkSession s = observe();
        if (s == null || s.id() != zk.getSessionId()) {
            return;
        }
        long sent = ticker.read();
        long previous = lastBeatSentNanos;
        if (previous != ZkSession.NONE && lastBeatAnsweredNanos != previous) {
            keepAliveFailing(s, true); // the previous beat, a period ago, is still unanswered
        }
        lastBeatSentNanos = sent;
        // The raw handle, not Curator's: an answer on this handle is an answer in this session, never a later one.
        zk.sync(
                "/",
                (rc, path, ctx) -> {
                    // ZooKeeper's event thread: connections counts every disconnection answered before this
                    if (rc == KeeperException.Code.OK.intValue()) {
                        s.answered(sent, ticker.read(), connections.get());
                        lastBeatAnsweredNanos = sent;
                        keepAliveFailing(s, false);
                    }
                },
                null);
    }

    /**
     * Tells the session's locks, once per change, that its heartbeats go unanswered ({@code true}: a beat unanswered
     * when the next is due, or no connection) or are answered again: the locker warns a lock's holder when its
     * validity left falls below the threshold while they fail ({@link io.distlock.RemoteLock#onAtRisk}).
     */
    private void keepAliveFailing(ZkSession s, boolean failing) {
        if (beatsFailing.compareAndSet(!failing, failing)) {
            if (failing) {
                log.debug(
                        "ZooKeeper heartbeats of {} unanswered; its {} lock(s) at risk",
                        s,
                        s.leases().size());
            }
            s.leases().forEach(lease -> lease.keepAliveFailing(failing));
        }
    }

    private void wakeAll() {
        for (Runnable wakeUp : wakeUps) {
            wakeUp.run();
        }
    }

    private ZooKeeper handleOrNull() {
        try {
            return client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public void close() {
        closed = true;
        eventSource.getCuratorListenable().removeListener(connectionEvents);
        client.getConnectionStateListenable().removeListener(this);
        heartbeat.shutdownNow();
    }
}
