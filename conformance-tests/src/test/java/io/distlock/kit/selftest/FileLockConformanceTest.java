package io.distlock.kit.selftest;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.StoreFaults;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Optional;

/**
 * The file-based test store passes the whole kit, the multi-process tests included: worker JVMs share its directory,
 * so this exercises the harness for real (forked JVMs, signals, merged histories, the fenced resource).
 */
class FileLockConformanceTest extends LockerConformanceTests {

    static final Path DIR = directory("lockfile");

    static Path directory(String name) {
        try {
            Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
            Files.createDirectories(tmp);
            return Files.createTempDirectory(tmp, "kit-" + name + "-").toAbsolutePath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String lockerUri() {
        return "lockfile://" + DIR;
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("lockfile:///proc/distlock-kit/unreachable"); // a directory that cannot be created
    }

    @Override
    public Optional<List<String>> storeEntries(String key) {
        try {
            return Optional.of(FileLockBackend.entries(DIR, key));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Optional<StoreFaults> storeFaults() {
        return Optional.of(new FileStoreFaults(DIR, leaseTime()));
    }

    /** The store polls: fewer rounds keep the suite quick, and every acquisition still contends. */
    @Override
    public int acquisitionsPerThread() {
        return 12;
    }
}
