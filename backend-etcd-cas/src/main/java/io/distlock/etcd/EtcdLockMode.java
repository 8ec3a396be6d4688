package io.distlock.etcd;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.ShownText;
import java.util.Locale;

/** How the etcd backend lays out and takes a lock (option {@value EtcdLockBackendProvider#MODE}). */
public enum EtcdLockMode {

    /**
     * The default: a queue in etcd's own {@code concurrency.Mutex} layout. Each acquisition puts its own key {@code
     * <prefix>/<name>/<lease id in hex>}; the key with the lowest create revision owns the lock; each waiter watches
     * only the key just before its own. Waiters are served in arrival order, a release wakes exactly one waiter, and
     * {@code etcdctl lock <prefix>/<name>} excludes and is excluded by distlock. Read-write locks and semaphores are
     * queues of the same kind, each in a directory of its own ({@link FairQueue}).
     */
    FAIR,

    /**
     * Seed 001's versioned compare-and-set: one key {@code <prefix>/<name>} per lock, taken by a transaction {@code
     * If(createRevision(key) == 0) Then put(key, ownerId, lease)}. Waiters watch that key and try again when it is
     * deleted: not fair (any waiter may win), and every waiter is woken by every release. Read-write locks and
     * semaphores likewise, on a versioned record of their holders changed by compare-and-set (see {@code CasRecord}):
     * not fair either, so readers may starve a writer.
     */
    CAS;

    /** The option value, lower case: {@code fair} or {@code cas}. */
    public String optionValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The mode named by an option value, case-insensitive.
     *
     * @throws LockConfigurationException if it names no mode
     */
    static EtcdLockMode parse(String value) {
        for (EtcdLockMode mode : values()) {
            if (mode.optionValue().equalsIgnoreCase(value.trim())) {
                return mode;
            }
        }
        throw new LockConfigurationException("Option '" + EtcdLockBackendProvider.MODE
                + "' of the etcd backend must be fair or cas, got '" + ShownText.of(value) + "'");
    }
}
