package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks on etcd in one of two layouts ({@link EtcdLockMode}), every lock key attached to the lease of one of the
 * backend's sessions ({@link Sessions}). Release and renewal compare the lock key's create revision, so a stale or
 * repeated call never touches a newer holder's key. One jetcd client per backend: its own, or the application's, which
 * it does not close.
 */
final class EtcdLockBackend implements LockBackend {

    private static final Logger log = LoggerFactory.getLogger(EtcdLockBackend.class);
    /** A delete that answers with the key it deleted. */
    private static final DeleteOption WITH_PREVIOUS =
            DeleteOption.builder().withPrevKV(true).build();

    private final Client client;
    private final boolean ownsClient;
    private final EtcdLocation location;
    private final EtcdLockMode mode;
    private final Duration operationTimeout;
    private final ScheduledExecutorService timer;
    private final EtcdCalls calls;
    private final Sessions sessions;
    private final Capabilities capabilities;
    /** What each acquisition is given: the calls, the sessions, the timeouts, the outage watch. */
    private final EtcdAcquisition.Shared acquisitions;

    private final EtcdInspection inspection;

    EtcdLockBackend(
            Client client,
            boolean ownsClient,
            EtcdLocation location,
            EtcdLockMode mode,
            Duration operationTimeout,
            Duration resolveTimeout,
            EtcdCalls calls,
            Sessions sessions,
            ScheduledExecutorService timer) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.location = location;
        this.mode = mode;
        this.operationTimeout = operationTimeout;
        this.calls = calls;
        this.sessions = sessions;
        this.timer = timer;
        // Read-write locks and semaphores: queues in the fair layout (FairQueue), holders' records in cas (CasRecord)
        this.capabilities = new Capabilities(true, mode == EtcdLockMode.FAIR, true, LeaseModel.SESSION)
                .with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT)
                .with(
                        Capabilities.Operation.INSPECT,
                        Capabilities.Operation.BREAK,
                        Capabilities.Operation.WARN,
                        Capabilities.Operation.LOCK_DELAY,
                        Capabilities.Operation.REQUEST_RELEASE);
        this.inspection = new EtcdInspection(calls, location.prefix(), mode, operationTimeout);
        this.acquisitions = new EtcdAcquisition.Shared(
                calls,
                sessions,
                new OutageWatch(calls, resolveTimeout),
                operationTimeout,
                resolveTimeout,
                this::releaseQuietly);
    }

    Sessions sessions() {
        return sessions;
    }

    /** CAS mode: the lock's one key, {@code <prefix>/<name>}. */
    String casKey(String key) {
        return location.prefix() + "/" + KeyCodec.encode(key);
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    private EtcdAcquisition attempt(LockRequest request, Deadline deadline, boolean tryOnce) {
        if (!capabilities.offers(request.kind())) {
            throw new UnsupportedOperationException("The etcd backend in mode " + mode.optionValue() + " offers no "
                    + request.kind().label() + " (offered: " + capabilities.kinds() + ")");
        }
        if (mode == EtcdLockMode.FAIR) {
            return new FairAcquisition(
                    acquisitions, request, FairQueue.of(location.prefix(), request), deadline, tryOnce);
        }
        return request.kind() == LockKind.LOCK
                ? new CasAcquisition(acquisitions, request, casKey(request.key()), deadline, tryOnce)
                : new CasRecordAcquisition(
                        acquisitions, request, CasRecord.of(location.prefix(), request), deadline, tryOnce);
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        EtcdAcquisition attempt = attempt(request, Deadline.after(operationTimeout, calls.ticker()), true);
        try {
            return await(attempt, "tryLock");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted during tryLock('" + request.key() + "')", e);
        }
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return await(attempt(request, deadline, false), "lock");
    }

    /** The native asynchronous acquisition: no thread waits; {@code blockingExecutor} is not used. */
    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        return attempt(request, deadline, false).start();
    }

    private Optional<Lease> await(EtcdAcquisition attempt, String operation) throws InterruptedException {
        CompletableFuture<Optional<Lease>> future = attempt.start();
        try {
            return future.get();
        } catch (InterruptedException e) {
            if (!future.cancel(false)) {
                // The grant won the race with the interrupt (get() throws even then): nobody will hold it, free it.
                future.getNow(Optional.empty()).ifPresent(lease -> releaseQuietly((EtcdLease) lease));
            }
            awaitCleanUp(attempt);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = EtcdCalls.unwrap(e);
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new LockBackendException(
                    "etcd failed during " + operation + "('" + attempt.request.key() + "'): " + cause, cause);
        }
    }

    /**
     * After an interrupt: wait (not interruptibly) until the attempt's key is gone; at most twice the operation timeout,
     * as the clean-up first waits for the answer to a put in flight, then deletes.
     */
    private void awaitCleanUp(EtcdAcquisition attempt) {
        boolean interrupted = false;
        long end = System.nanoTime() + 2 * operationTimeout.toNanos();
        while (true) {
            try {
                attempt.cleaned.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException | TimeoutException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Keeps the session alive once more and checks that the lock key is still ours (same create revision); the
     * locker does not call this for a {@link LeaseModel#SESSION} backend, whose sessions are kept alive by
     * themselves, but it is an honest answer.
     */
    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        EtcdLease etcd = (EtcdLease) lease;
        if (etcd.isLost()) {
            return OptionalLong.empty();
        }
        Deadline deadline = Deadline.after(operationTimeout, calls.ticker());
        try {
            long until = etcd.session().keepAliveNow(deadline).get();
            TxnResponse check = calls.txn(
                            "checking lock '" + lease.key() + "'",
                            txn -> txn.If(new Cmp(
                                    bytes(etcd.etcdKey()),
                                    Cmp.Op.EQUAL,
                                    CmpTarget.createRevision(etcd.createRevision()))),
                            deadline)
                    .get();
            return check.isSucceeded() ? OptionalLong.of(until) : OptionalLong.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted renewing lock '" + lease.key() + "'", e);
        } catch (ExecutionException e) {
            if (etcd.session().isLost()) {
                return OptionalLong.empty();
            }
            throw asBackendException("renewing", lease, EtcdCalls.unwrap(e));
        }
    }

    /**
     * Deletes the lock key if it is still ours (its create revision). A repeat after a lost reply finds the key gone;
     * while our session lives, only a delete can have removed it, and ours was in flight: that counts as released.
     *
     * <p>In fair mode the first send is a plain delete. The key is named after our session's lease, and only an attempt
     * of this session that has claimed the name puts it, so the key there is ours; etcd applies a plain delete without
     * reading the key for a compare first, which made an uncontended acquire + release about 6 % faster (see
     * docs/etcd.md). A late send must still never delete a later attempt's key: a send that timed out, or whose reply
     * was lost, may be applied after a later put of the same key. So a repeat compares the create revision, and the name
     * is given back (so that this session may put the key again) only once every send of the release has had etcd's
     * answer or failed on its connection ({@link EtcdCalls.Write#settled()}), as the clean-up of an attempt waits for
     * its put. In cas mode the key is every locker's, so every send compares.
     */
    @Override
    public boolean release(Lease lease) {
        EtcdLease etcd = (EtcdLease) lease;
        Releasing releasing = releaseAsync(etcd);
        try {
            return releasing.result().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            etcd.session()
                    .deleteLater(
                            etcd.etcdKey(), etcd.value(), lease.ownerId(), etcd.claimedName(), releasing.settled());
            throw new LockBackendException(
                    "Interrupted releasing lock '" + lease.key() + "'; its key is deleted in the background", e);
        } catch (ExecutionException e) {
            throw asBackendException("releasing", lease, EtcdCalls.unwrap(e));
        }
    }

    /** What a send of a release found: our key deleted, no key, or the key of another holder (left alone). */
    private enum Deletion {
        OURS,
        GONE,
        ANOTHER
    }

    /** A release in flight: its result, and the write whose sends must settle before the name is given back. */
    private record Releasing(CompletableFuture<Boolean> result, EtcdCalls.Write<Deletion> write) {
        CompletableFuture<Void> settled() {
            return write == null ? CompletableFuture.completedFuture(null) : write.settled();
        }
    }

    private Releasing releaseAsync(EtcdLease etcd) {
        EtcdSession session = etcd.session();
        etcd.releasing();
        session.forget(etcd);
        if (session.isLost()) {
            unclaim(etcd); // its lease is gone or revoked, and its keys with it
            return new Releasing(CompletableFuture.completedFuture(false), null);
        }
        // A lock told lost by its key's watch still sends the delete: harmless if the key is gone or another's, and it
        // never leaves a key behind should the report have been wrong.
        boolean toldLost = etcd.isLost();
        boolean plainFirst = etcd.claimedName() != null;
        AtomicInteger sends = new AtomicInteger();
        EtcdCalls.Write<Deletion> write = calls.send(
                "releasing lock '" + etcd.key() + "'",
                () -> sends.incrementAndGet() == 1 && plainFirst ? plainDelete(etcd) : guardedDelete(etcd),
                Deadline.after(operationTimeout, calls.ticker()));
        CompletableFuture<Boolean> result = write.result().handle((deletion, failure) -> {
            // asked here, with the result known: when every send is answered, settled() is complete at once, and the
            // name is given back before the caller learns that the lock is released
            CompletableFuture<Void> settled = write.settled();
            if (failure != null) {
                session.deleteLater(etcd.etcdKey(), etcd.value(), etcd.ownerId(), etcd.claimedName(), settled);
                throw new CompletionException(EtcdCalls.unwrap(failure));
            }
            settled.whenComplete((v, e) -> unclaim(etcd));
            return switch (deletion) {
                case OURS -> !toldLost;
                case GONE -> sends.get() > 1 && !session.isLost() && !toldLost;
                case ANOTHER -> false;
            };
        });
        return new Releasing(result, write);
    }

    /** Deletes the key, whatever it holds (fair mode's first send; see {@link #release}). */
    private CompletableFuture<Deletion> plainDelete(EtcdLease etcd) {
        return calls.kv().delete(bytes(etcd.etcdKey()), WITH_PREVIOUS).thenApply(response -> {
            List<KeyValue> previous = response.getPrevKvs(); // jetcd maps the list anew at every call
            if (previous.isEmpty()) {
                return Deletion.GONE;
            }
            if (previous.get(0).getCreateRevision() == etcd.createRevision()) {
                return Deletion.OURS;
            }
            // Only a client using our session's lease id could have put it: not a lock of this locker's
            log.warn(
                    "Released lock '{}' deleted a key {} that another client put with this locker's lease",
                    etcd.key(),
                    etcd.etcdKey());
            return Deletion.ANOTHER;
        });
    }

    /** {@code op}, then, for a holder of a cas record, the record's read and the count of its holders. */
    private static Op[] withRecordRead(Op op, String record) {
        return record == null
                ? new Op[] {op}
                : new Op[] {op, Op.get(bytes(record), GetOption.DEFAULT), CasRecord.countHolders(record)};
    }

    /**
     * Deletes the key only if its create revision is still ours. A holder of a cas record ({@link CasRecord}) reads the
     * record and counts the holders in the same transaction, and when none is left, deletes the record if its version
     * is still the one read: no grant came since, so nobody holds.
     */
    private CompletableFuture<Deletion> guardedDelete(EtcdLease etcd) {
        ByteSequence key = bytes(etcd.etcdKey());
        String record = etcd.recordKey();
        Op[] thenRead = withRecordRead(Op.delete(key, DeleteOption.DEFAULT), record);
        Op[] elseRead = withRecordRead(Op.get(key, GetOption.DEFAULT), record);
        return calls.kv()
                .txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(etcd.createRevision())))
                .Then(thenRead)
                .Else(elseRead)
                .commit()
                .thenCompose(response -> {
                    List<GetResponse> reads = response.getGetResponses(); // jetcd maps the list anew at every call
                    Deletion deletion = response.isSucceeded()
                            ? Deletion.OURS
                            : reads.get(0).getKvs().isEmpty() ? Deletion.GONE : Deletion.ANOTHER;
                    if (record == null) {
                        return CompletableFuture.completedFuture(deletion);
                    }
                    List<KeyValue> recordRead = reads.get(reads.size() - 2).getKvs();
                    long holders = reads.get(reads.size() - 1).getCount();
                    if (recordRead.isEmpty() || holders > 0) {
                        return CompletableFuture.completedFuture(deletion);
                    }
                    long version = recordRead.get(0).getModRevision();
                    return calls.kv()
                            .txn()
                            .If(new Cmp(bytes(record), Cmp.Op.EQUAL, CmpTarget.modRevision(version)))
                            .Then(Op.delete(bytes(record), DeleteOption.DEFAULT))
                            .commit()
                            .thenApply(dropped -> deletion);
                });
    }

    private static void unclaim(EtcdLease lease) {
        if (lease.claimedName() != null) {
            lease.session().unclaim(lease.claimedName(), lease.ownerId());
        }
    }

    /** Releases a grant nobody can receive any more. */
    void releaseQuietly(EtcdLease lease) {
        releaseAsync(lease).result().whenComplete((released, e) -> {
            if (e != null) {
                log.debug("Could not release the unwanted grant of '{}': {}", lease.key(), e.toString());
            }
        });
    }

    private LockBackendException asBackendException(String operation, Lease lease, Throwable cause) {
        if (cause instanceof LockBackendException e) {
            return e;
        }
        return new LockBackendException(
                "etcd at " + calls.endpoints() + " failed " + operation + " lock '" + lease.key() + "': " + cause,
                cause);
    }

    /**
     * One read-only transaction of the key's three ranges (lock, read-write lock, semaphore): each holder with its
     * key's value as owner id and its create revision as fencing token; in fair mode the keys queued behind the holders
     * counted as waiting. No grant time nor lease end: etcd keeps no time with a key, which ends with its session.
     */
    @Override
    public LockState inspect(String key) {
        return inspection.inspect(key);
    }

    /** One range read of the whole prefix ({@code etcdctl get --prefix}), grouped back into the keys. */
    @Override
    public List<LockState> listHeld() {
        return inspection.listHeld();
    }

    /**
     * Deletes the holders' keys (not the waiters'), each if still the one read, as {@code etcdctl del} would: one
     * transaction per holder after the look-up. The holders are told by the watch on their key; the next waiter is
     * served as after a release.
     */
    @Override
    public List<LockHolder> breakLock(String key) {
        return inspection.breakLock(key);
    }

    /**
     * Puts each holder's key again, value and lease unchanged, if it is still the one read: the holder's locker sees
     * the put on the watch it keeps on its own key and tells the lock once per put ({@link EtcdInspection#requestRelease},
     * {@link OwnKeyWatch}). One transaction per holder after the look-up; nothing is written for a free key.
     */
    @Override
    public List<LockHolder> requestRelease(String key) {
        return inspection.requestRelease(key);
    }

    /** Every request sent to etcd since the backend opened (transactions, keep-alives, grants, watch creations). */
    @Override
    public OptionalLong storeRequests() {
        return OptionalLong.of(calls.requests());
    }

    /**
     * Revokes the sessions (any key still attached goes with them) and disconnects; the application's own client
     * ({@link EtcdLockers#using}) stays open.
     */
    @Override
    public void close() {
        try {
            calls.closeWatches();
            sessions.close();
        } finally {
            try {
                if (ownsClient) {
                    client.close();
                }
            } finally {
                calls.endRepeats(); // the timer that would send them again stops now
                timer.shutdownNow();
            }
        }
    }

    @Override
    public String toString() {
        return "EtcdLockBackend[" + location.describe() + ", mode=" + mode.optionValue() + "]";
    }
}
