package io.distlock.kit.selftest;

import io.distlock.kit.StoreFaults;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The kit's store faults on the file store: the store is down while its directory is moved away, and a lock entry is
 * its lock file.
 */
final class FileStoreFaults implements StoreFaults {

    private final Path dir;
    private final Path away;
    private final Duration leaseTime;

    FileStoreFaults(Path dir, Duration leaseTime) {
        this.dir = dir;
        this.away = dir.resolveSibling(dir.getFileName() + ".down");
        this.leaseTime = leaseTime;
    }

    @Override
    public void stopStore() {
        move(dir, away);
    }

    @Override
    public void startStore() {
        if (Files.isDirectory(away)) {
            move(away, dir);
        }
    }

    @Override
    public void deleteLockEntry(String key) {
        try {
            Files.delete(FileLockBackend.lockFile(dir, key));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The file store has no watch: the holder learns at its next renewal, a third of the lease later, or so. */
    @Override
    public Duration deletionNoticedWithin() {
        return leaseTime.dividedBy(3).plusSeconds(1);
    }

    private static void move(Path from, Path to) {
        try {
            Files.move(from, to);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
