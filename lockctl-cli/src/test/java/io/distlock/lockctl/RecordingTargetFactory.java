package io.distlock.lockctl;

import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A bench target that records what the engine asks of it, {@code peer:recording://<file>}: every acquisition appends
 * one line {@code <pid> <key>} to the file (one short append, atomic across processes), and nothing is locked. It
 * checks the engine's schedule (which keys, how many times, in which order across workers), not a lock.
 */
public final class RecordingTargetFactory implements BenchTargetFactory {

    private static final String PREFIX = "peer:recording://";

    @Override
    public boolean supports(String spec) {
        return spec.startsWith(PREFIX);
    }

    @Override
    public BenchTarget open(String spec) {
        Path file = Path.of(spec.substring(PREFIX.length()));
        long pid = ProcessHandle.current().pid();
        return new BenchTarget() {
            @Override
            public Held acquire(String key) {
                try {
                    Files.write(
                            file,
                            (pid + " " + key + "\n").getBytes(StandardCharsets.UTF_8),
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return () -> {};
            }

            @Override
            public void close() {}
        };
    }

    /** Nothing is held, so the threads of one worker may share it. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return PREFIX + "<file> (tests only: records each acquisition's key, locks nothing)";
    }
}
