package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;
import static io.distlock.etcd.EtcdCalls.text;

import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.spi.Deadline;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Who holds a key, read from etcd in the backend's layout ({@link FairQueue}, {@link CasRecord}), and breaking it: what
 * {@link EtcdLockBackend#inspect}, {@link EtcdLockBackend#listHeld} and {@link EtcdLockBackend#breakLock} do.
 *
 * <p>A holder's owner id is its key's value (an entry whose value is empty, as {@code etcdctl lock} writes it, shows its
 * key, which names its lease); a fair election's key holds the candidate's identity, shown as the owner label, with
 * the key as the owner id; its fencing token is its key's create revision, as the lease's. etcd keeps no time with
 * a key, and a key ends with its session's lease, not with a time to live of its own: grant time and lease end stay
 * empty. In the fair layout the holders are the first keys of each queue by the grant rule of {@link
 * io.distlock.spi.LockRequest}, the keys behind them the waiters; the cas layout has no queue.
 */
final class EtcdInspection {

    private final EtcdCalls calls;
    private final String prefix;
    private final EtcdLockMode mode;
    private final Duration operationTimeout;

    EtcdInspection(EtcdCalls calls, String prefix, EtcdLockMode mode, Duration operationTimeout) {
        this.calls = calls;
        this.prefix = prefix;
        this.mode = mode;
        this.operationTimeout = operationTimeout;
    }

    /** One read-only transaction of three ranges: the key's lock, read-write lock and semaphore. */
    LockState inspect(String key) {
        return state(key, read(key));
    }

    private Map<LockKind.Space, List<KeyValue>> read(String key) {
        String name = KeyCodec.encode(key);
        List<String> dirs = mode == EtcdLockMode.FAIR
                ? List.of(
                        prefix + "/" + name + "/",
                        prefix + "/" + FairQueue.READ_WRITE + "/" + name + "/",
                        prefix + "/" + FairQueue.SEMAPHORE + "/" + name + "/")
                : List.of(
                        prefix + "/" + name,
                        CasRecord.holdersDir(prefix + "/" + FairQueue.READ_WRITE + "/" + name),
                        CasRecord.holdersDir(prefix + "/" + FairQueue.SEMAPHORE + "/" + name));
        Op[] reads = dirs.stream()
                .map(d -> d.endsWith("/") ? range(d) : Op.get(bytes(d), GetOption.DEFAULT))
                .toArray(Op[]::new);
        TxnResponse read = await(calls.txn("inspecting '" + key + "'", txn -> txn.Then(reads), deadline()), key);
        Map<LockKind.Space, List<KeyValue>> spaces = new EnumMap<>(LockKind.Space.class);
        spaces.put(LockKind.Space.LOCK, read.getGetResponses().get(0).getKvs());
        spaces.put(LockKind.Space.READ_WRITE, read.getGetResponses().get(1).getKvs());
        spaces.put(LockKind.Space.SEMAPHORE, read.getGetResponses().get(2).getKvs());
        return spaces;
    }

    /** One range read of the whole prefix, its keys grouped back into the keys they lock. */
    List<LockState> listHeld() {
        TxnResponse read =
                await(calls.txn("listing '" + prefix + "/'", txn -> txn.Then(range(prefix + "/")), deadline()), prefix);
        Map<String, Map<LockKind.Space, List<KeyValue>>> byKey = new TreeMap<>();
        for (KeyValue kv : read.getGetResponses().get(0).getKvs()) {
            place(text(kv.getKey()))
                    .ifPresent(place -> byKey.computeIfAbsent(place.key(), k -> new EnumMap<>(LockKind.Space.class))
                            .computeIfAbsent(place.space(), s -> new ArrayList<>())
                            .add(kv));
        }
        List<LockState> held = new ArrayList<>();
        byKey.forEach((key, spaces) -> {
            LockState state = state(key, spaces);
            if (state.held()) {
                held.add(state);
            }
        });
        return held;
    }

    /**
     * Deletes the holders' keys, as {@code etcdctl del} would, each only if it is still the one read (its create
     * revision); the waiters' keys stay, and the next is served as after a release. The holders are told by the watch
     * on their key.
     *
     * @return the holders whose keys this call deleted
     */
    List<LockHolder> breakLock(String key) {
        List<Held> holders = found(key, read(key)).holders();
        List<CompletableFuture<TxnResponse>> deletes = new ArrayList<>();
        for (Held held : holders) {
            ByteSequence etcdKey = bytes(held.etcdKey());
            deletes.add(calls.txn(
                    "breaking '" + key + "'",
                    txn -> txn.If(new Cmp(etcdKey, Cmp.Op.EQUAL, CmpTarget.createRevision(held.createRevision())))
                            .Then(Op.delete(etcdKey, DeleteOption.DEFAULT)),
                    deadline()));
        }
        List<LockHolder> broken = new ArrayList<>();
        for (int i = 0; i < holders.size(); i++) {
            if (await(deletes.get(i), key).isSucceeded()) {
                broken.add(holders.get(i).holder());
            }
        }
        return broken;
    }

    /**
     * Asks the holders to let go: puts each holder's key again with the value and lease it has, if it is still the one
     * read (its create revision and version), as {@code etcdctl put --ignore-value --ignore-lease} would (jetcd has no
     * such options, so the read's value and lease are put, and the version's compare makes sure they are still the
     * key's). Only the key's version and mod revision change, which nothing of distlock's nor of etcd's {@code
     * concurrency} package compares; the holder's locker watches its key for such puts ({@link OwnKeyWatch}), and
     * the waiters' watches see deletions only. One transaction per holder after the look-up; a free key is not
     * written. The compare also keeps a repeat after a lost reply from asking twice: it finds the version moved, and
     * reads the key instead, which is still the holder's.
     *
     * @return the holders whose keys this call put, or found put again by another request meanwhile
     */
    List<LockHolder> requestRelease(String key) {
        List<Held> holders = found(key, read(key)).holders();
        List<CompletableFuture<TxnResponse>> puts = new ArrayList<>();
        for (Held held : holders) {
            KeyValue kv = held.kv();
            ByteSequence etcdKey = kv.getKey();
            puts.add(calls.txn(
                    "asking the holder of '" + key + "' to let go",
                    txn -> txn.If(
                                    new Cmp(etcdKey, Cmp.Op.EQUAL, CmpTarget.createRevision(kv.getCreateRevision())),
                                    new Cmp(etcdKey, Cmp.Op.EQUAL, CmpTarget.version(kv.getVersion())))
                            .Then(Op.put(
                                    etcdKey,
                                    kv.getValue(),
                                    PutOption.builder()
                                            .withLeaseId(kv.getLease())
                                            .build()))
                            .Else(Op.get(etcdKey, GetOption.DEFAULT)),
                    deadline()));
        }
        List<LockHolder> asked = new ArrayList<>();
        for (int i = 0; i < holders.size(); i++) {
            TxnResponse response = await(puts.get(i), key);
            Held held = holders.get(i);
            if (response.isSucceeded()
                    || response.getGetResponses().get(0).getKvs().stream()
                            .anyMatch(now -> now.getCreateRevision() == held.createRevision())) {
                asked.add(held.holder());
            }
        }
        return asked;
    }

    /** A holder as shown, and the key that holds it as read. */
    private record Held(LockHolder holder, KeyValue kv) {
        String etcdKey() {
            return text(kv.getKey());
        }

        long createRevision() {
            return kv.getCreateRevision();
        }
    }

    /** The holders of a key, in grant order (create revision), and how many wait behind them. */
    private record Found(List<Held> holders, int waiting) {}

    private LockState state(String key, Map<LockKind.Space, List<KeyValue>> spaces) {
        Found found = found(key, spaces);
        return new LockState(
                key,
                found.holders().stream().map(Held::holder).toList(),
                mode == EtcdLockMode.FAIR ? OptionalInt.of(found.waiting()) : OptionalInt.empty());
    }

    private Found found(String key, Map<LockKind.Space, List<KeyValue>> spaces) {
        boolean election = mode == EtcdLockMode.FAIR && FairQueue.isElection(key);
        List<Held> holders = new ArrayList<>();
        int waiting = 0;
        for (Map.Entry<LockKind.Space, List<KeyValue>> space : spaces.entrySet()) {
            List<KeyValue> keys = new ArrayList<>(space.getValue());
            keys.sort(Comparator.comparingLong(KeyValue::getCreateRevision));
            int granted = mode == EtcdLockMode.FAIR ? granted(space.getKey(), keys) : keys.size();
            for (KeyValue kv : keys.subList(0, granted)) {
                holders.add(election ? candidate(kv) : held(space.getKey(), kv));
            }
            waiting += keys.size() - granted;
        }
        holders.sort(Comparator.comparingLong(Held::createRevision));
        return new Found(holders, waiting);
    }

    /**
     * How many keys at the head of a fair queue (in create order) hold it, by the grant rule: the first of a lock's;
     * a writer first, or the readers before the first writer; the permits before the first one that has at least the
     * smallest N among itself and those ahead of it in front.
     */
    private static int granted(LockKind.Space space, List<KeyValue> queue) {
        if (queue.isEmpty()) {
            return 0;
        }
        return switch (space) {
            case LOCK -> 1;
            case READ_WRITE -> {
                if (kindIn(LockKind.Space.READ_WRITE, queue.get(0)) == LockKind.WRITE) {
                    yield 1;
                }
                int readers = 0;
                while (readers < queue.size()
                        && kindIn(LockKind.Space.READ_WRITE, queue.get(readers)) == LockKind.READ) {
                    readers++;
                }
                yield readers;
            }
            case SEMAPHORE -> {
                int limit = Integer.MAX_VALUE;
                int i = 0;
                for (; i < queue.size(); i++) {
                    limit = Math.min(limit, permitsOf(queue.get(i)));
                    if (i >= limit) {
                        break;
                    }
                }
                yield i;
            }
        };
    }

    private static Held held(LockKind.Space space, KeyValue kv) {
        String etcdKey = text(kv.getKey());
        String value = text(kv.getValue());
        LockHolder holder = LockHolder.of(
                kindIn(space, kv),
                value.isEmpty() ? etcdKey : value, // etcdctl lock stores nothing: its key names its lease
                Optional.empty(),
                Optional.empty(),
                OptionalLong.of(kv.getCreateRevision()));
        return new Held(holder, kv);
    }

    /**
     * The leader of a fair election: its key's value is the candidate's identity (a distlock candidate's, or the
     * proposal of {@code etcdctl elect}), shown as the owner label; the key itself, which names its lease, as the owner
     * id, since the value is not one.
     */
    private static Held candidate(KeyValue kv) {
        String etcdKey = text(kv.getKey());
        String value = text(kv.getValue());
        LockHolder holder = new LockHolder(
                LockKind.LOCK,
                value.isEmpty() ? etcdKey : value,
                etcdKey,
                Optional.empty(),
                Optional.empty(),
                OptionalLong.of(kv.getCreateRevision()));
        return new Held(holder, kv);
    }

    /**
     * The kind of a holder's key in {@code space}: a read-write lock's is {@code .../read/<id>} or {@code
     * .../write/<id>} in both layouts, a semaphore's {@code .../<N>/<id>}.
     */
    private static LockKind kindIn(LockKind.Space space, KeyValue kv) {
        return switch (space) {
            case LOCK -> LockKind.LOCK;
            case READ_WRITE -> LockKind.WRITE.label().equals(segmentBeforeLast(kv)) ? LockKind.WRITE : LockKind.READ;
            case SEMAPHORE -> LockKind.PERMIT;
        };
    }

    /** A permit key's N; a key of another shape counts as one permit (as {@link FairQueue} counts it). */
    private static int permitsOf(KeyValue kv) {
        try {
            return Math.max(1, Integer.parseInt(segmentBeforeLast(kv)));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    private static String segmentBeforeLast(KeyValue kv) {
        String key = text(kv.getKey());
        int last = key.lastIndexOf('/');
        return last <= 0 ? "" : key.substring(key.lastIndexOf('/', last - 1) + 1, last);
    }

    /** Where a key under the prefix belongs: the key it locks and the space, in this backend's layout. */
    private record Place(String key, LockKind.Space space) {}

    /**
     * The place of {@code etcdKey} in the layout of this backend's mode: fair {@code <name>/<lease>}, {@code
     * %read-write/<name>/<read|write>/<lease>}, {@code %semaphore/<name>/<N>/<lease>}; cas {@code <name>}, {@code
     * %read-write/<name>%holders/<read|write>/<owner>}, {@code %semaphore/<name>%holders/<N>/<slot>}. Empty for a key of
     * another shape (another mode's, a cas record, another tool's).
     */
    private Optional<Place> place(String etcdKey) {
        if (!etcdKey.startsWith(prefix + "/")) {
            return Optional.empty();
        }
        String[] parts = etcdKey.substring(prefix.length() + 1).split("/", -1);
        boolean fair = mode == EtcdLockMode.FAIR;
        LockKind.Space space =
                switch (parts[0]) {
                    case FairQueue.READ_WRITE -> LockKind.Space.READ_WRITE;
                    case FairQueue.SEMAPHORE -> LockKind.Space.SEMAPHORE;
                    default -> LockKind.Space.LOCK;
                };
        String name;
        if (space == LockKind.Space.LOCK) {
            if (parts.length != (fair ? 2 : 1)) {
                return Optional.empty();
            }
            name = parts[0];
        } else {
            if (parts.length != 4 || fair == parts[1].endsWith(CasRecord.HOLDERS)) {
                return Optional.empty();
            }
            name = fair ? parts[1] : parts[1].substring(0, parts[1].length() - CasRecord.HOLDERS.length());
        }
        try {
            return Optional.of(new Place(KeyCodec.decode(name), space));
        } catch (IllegalArgumentException notOurs) {
            return Optional.empty();
        }
    }

    private Deadline deadline() {
        return Deadline.after(operationTimeout, calls.ticker());
    }

    private static Op range(String dir) {
        return Op.get(
                bytes(dir),
                GetOption.builder().withRange(bytes(CasRecord.rangeEnd(dir))).build());
    }

    private <T> T await(CompletableFuture<T> call, String what) {
        try {
            return call.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted reading '" + what + "' from etcd", e);
        } catch (ExecutionException e) {
            Throwable cause = EtcdCalls.unwrap(e);
            if (cause instanceof LockBackendException b) {
                throw b;
            }
            throw new LockBackendException(
                    "etcd at " + calls.endpoints() + " failed reading '" + what + "': " + cause, cause);
        }
    }
}
