package io.distlock.kit.selftest;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Set;

/**
 * A small lock store shared by the processes of one host, to run the kit's multi-process tests without a server:
 * {@code lockfile:///some/dir}. Each lock is a file in the directory holding its owner, expiry and fencing token; a
 * lock file on the directory's mutex file makes each operation atomic across processes. Expiry uses {@link
 * System#nanoTime()}, one clock for every process of a Linux host. Subclasses ship deliberately broken variants.
 */
public class FileLockBackendProvider implements LockBackendProvider {

    private final String scheme;
    private final FileLockBackend.Defect defect;

    /** The correct store, scheme {@code lockfile}. */
    public FileLockBackendProvider() {
        this("lockfile", FileLockBackend.Defect.NONE);
    }

    FileLockBackendProvider(String scheme, FileLockBackend.Defect defect) {
        this.scheme = scheme;
        this.defect = defect;
    }

    @Override
    public String name() {
        return scheme;
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of(scheme);
    }

    @Override
    public LockBackend open(BackendConfig config) {
        String path = config.uri().getPath();
        if (path == null || path.isBlank() || !path.startsWith("/")) {
            throw new LockConfigurationException(
                    "Malformed " + scheme + " URI '" + config.uri() + "'; expected " + scheme + ":///absolute/dir");
        }
        Path dir = Paths.get(path);
        return new FileLockBackend(dir, config.ticker(), defect);
    }

    /** Broken: check and write are not atomic across processes (no mutex), like a store without compare-and-set. */
    public static final class Racy extends FileLockBackendProvider {
        /** For the service loader. */
        public Racy() {
            super("lockfile-racy", FileLockBackend.Defect.RACY);
        }
    }

    /**
     * Broken: check and write are atomic among one process's threads but not across processes, like a client that
     * guards a store without compare-and-set with a mutex of its own.
     */
    public static final class JvmOnly extends FileLockBackendProvider {
        /** For the service loader. */
        public JvmOnly() {
            super("lockfile-jvmonly", FileLockBackend.Defect.JVM_ONLY);
        }
    }

    /** Broken: the store keeps every entry for a day, whatever the lease time: a dead holder's lock stays. */
    public static final class NeverExpires extends FileLockBackendProvider {
        /** For the service loader. */
        public NeverExpires() {
            super("lockfile-neverexpires", FileLockBackend.Defect.NEVER_EXPIRES);
        }
    }

    /** Broken: reports each lease valid for ten lease times, while the store keeps it for one. */
    public static final class GenerousValidity extends FileLockBackendProvider {
        /** For the service loader. */
        public GenerousValidity() {
            super("lockfile-generous", FileLockBackend.Defect.GENEROUS_VALIDITY);
        }
    }

    /** Broken: a waiter that times out or is interrupted leaves its waiter file behind. */
    public static final class LeavesWaiters extends FileLockBackendProvider {
        /** For the service loader. */
        public LeavesWaiters() {
            super("lockfile-leaveswaiters", FileLockBackend.Defect.LEAVES_WAITERS);
        }
    }

    /** Broken: simultaneous tryLocks all give up (violates Theorem 4). */
    public static final class ContendedTryLock extends FileLockBackendProvider {
        /** For the service loader. */
        public ContendedTryLock() {
            super("lockfile-contended", FileLockBackend.Defect.CONTENDED_TRYLOCK);
        }
    }

    /** Broken: declares fencing, but its tokens fall with every acquisition. */
    public static final class FallingTokens extends FileLockBackendProvider {
        /** For the service loader. */
        public FallingTokens() {
            super("lockfile-fallingtokens", FileLockBackend.Defect.FALLING_TOKENS);
        }
    }

    /** Broken: readers ignore a waiting writer's mark, so that overlapping readers starve the writer. */
    public static final class ReadersOvertake extends FileLockBackendProvider {
        /** For the service loader. */
        public ReadersOvertake() {
            super("lockfile-readersovertake", FileLockBackend.Defect.READERS_OVERTAKE);
        }
    }

    /** Broken: a blocking acquire ignores the store's failures and polls on, through any outage, until its deadline. */
    public static final class WaitsThroughOutages extends FileLockBackendProvider {
        /** For the service loader. */
        public WaitsThroughOutages() {
            super("lockfile-waitsthroughoutages", FileLockBackend.Defect.WAITS_THROUGH_OUTAGES);
        }
    }
}
