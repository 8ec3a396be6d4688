package io.distlock.kit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A resource guarded by fencing tokens, shared by the processes of one host: it accepts a write only with a token at
 * least as large as the largest it accepted before, so a holder whose lease passed to someone else cannot overwrite
 * the next holder's work (Kleppmann's fencing).
 *
 * <p>Each write is one {@code O_APPEND} write of one line to a log: the order of the log is the order in which the
 * resource received the writes, and whether each was accepted follows from the lines before it. Nothing is locked,
 * so a writer frozen by {@code SIGSTOP} can never block the others, as it could not block a real fenced store.
 */
final class FencedResource {

    /** One write the resource received, and whether it accepted it. */
    record Write(long token, String holder, boolean accepted) {}

    private final Path log;

    FencedResource(Path directory) {
        this.log = directory.resolve("fence.log");
    }

    /** Sends a write on behalf of {@code holder} with {@code token}; {@link #writes()} tells whether it was accepted. */
    void write(long token, String holder) {
        ByteBuffer line = ByteBuffer.wrap((token + " " + holder + "\n").getBytes(StandardCharsets.UTF_8));
        try (FileChannel channel =
                FileChannel.open(log, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            channel.write(line); // one short append: atomic, never interleaved with another writer's line
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the fenced resource " + log, e);
        }
    }

    /** Every write received, in the order received, each accepted iff its token is not below the last accepted. */
    List<Write> writes() {
        List<Write> writes = new ArrayList<>();
        if (!Files.exists(log)) {
            return writes;
        }
        long last = Long.MIN_VALUE;
        try {
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                String[] f = line.trim().split(" ");
                long token = Long.parseLong(f[0]);
                boolean accepted = token >= last;
                if (accepted) {
                    last = token;
                }
                writes.add(new Write(token, f[1], accepted));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + log, e);
        }
        return writes;
    }
}
