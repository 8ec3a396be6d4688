package io.distlock.lockctl.bench;

import java.util.function.LongConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** A progress bar on the terminal; nothing at all when standard output is not a terminal (a pipe, a file, CI). */
public final class Progress implements AutoCloseable {

    private final ProgressBar bar;
    private long done;

    private Progress(ProgressBar bar) {
        this.bar = bar;
    }

    /** A bar of {@code total} steps, shown only if this process has a terminal. */
    public static Progress of(String task, long total) {
        if (System.console() == null) {
            return new Progress(null);
        }
        return new Progress(new ProgressBarBuilder()
                .setTaskName(task)
                .setInitialMax(total)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(250)
                .build());
    }

    /**
     * A consumer for the next part of the work: it is told how many of that part's steps are done so far, and moves
     * the bar to what earlier parts completed plus that.
     */
    public LongConsumer step() {
        long base = done;
        return partDone -> {
            done = base + partDone;
            if (bar != null) {
                bar.stepTo(done);
            }
        };
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
        }
    }
}
