package io.distlock.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * What the JVM writes to its standard error while a block runs, for tests of what a user would see in the logs (the
 * tests log through slf4j-simple, which writes to {@link System#err} as it is at each line). The text still reaches
 * the real standard error as it is written.
 */
public final class StandardError {

    /** A test's block, which may throw. */
    @FunctionalInterface
    public interface Block {
        void run() throws Exception;
    }

    private StandardError() {}

    /**
     * Runs {@code block} with the standard error copied aside, and returns the copy; the standard error is put back
     * however the block ends.
     */
    public static String during(Block block) throws Exception {
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        PrintStream real = System.err;
        System.setErr(new PrintStream(new Tee(real, copy), true, StandardCharsets.UTF_8));
        try {
            block.run();
        } finally {
            System.err.flush();
            System.setErr(real);
        }
        return copy.toString(StandardCharsets.UTF_8);
    }

    /** Writes to both streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public void write(int b) throws IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            first.write(b, off, len);
            second.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            first.flush();
            second.flush();
        }
    }
}
