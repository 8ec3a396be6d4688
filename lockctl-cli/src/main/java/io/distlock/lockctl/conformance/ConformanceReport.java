package io.distlock.lockctl.conformance;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/** Prints each test of the kit as it ends — passed, failed with the offending excerpt, or skipped and why. */
public final class ConformanceReport implements TestExecutionListener {

    private static final int MAX_FAILURE_LINES = 25;
    private static final int MAX_LINE = 600;

    private final PrintWriter out;
    private final List<String> failed = new ArrayList<>();
    private int passed;
    private int skipped;

    /** Writes to {@code out}. */
    public ConformanceReport(PrintWriter out) {
        this.out = out;
    }

    @Override
    public void executionSkipped(TestIdentifier test, String reason) {
        if (test.isTest()) {
            skipped++;
            out.println("  SKIP  " + name(test) + " — " + reason);
            out.flush();
        }
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (!test.isTest()) {
            if (result.getStatus() == TestExecutionResult.Status.FAILED
                    && test.getParentId().isEmpty()) {
                // a failure of the whole run (e.g. the store could not be opened before any test)
                failed.add(name(test));
                printFailure(name(test), result);
            }
            return;
        }
        switch (result.getStatus()) {
            case SUCCESSFUL -> {
                passed++;
                out.println("  PASS  " + name(test));
            }
            case ABORTED -> {
                skipped++;
                out.println("  SKIP  " + name(test) + " — "
                        + result.getThrowable().map(Throwable::getMessage).orElse("aborted"));
            }
            case FAILED -> {
                failed.add(name(test));
                printFailure(name(test), result);
            }
        }
        out.flush();
    }

    private void printFailure(String name, TestExecutionResult result) {
        out.println("  FAIL  " + name);
        String message = result.getThrowable().map(ConformanceReport::describe).orElse("failed");
        List<String> lines = message.lines().collect(Collectors.toList());
        lines.stream()
                .limit(MAX_FAILURE_LINES)
                .map(l -> l.length() <= MAX_LINE ? l : l.substring(0, MAX_LINE) + " ...")
                .forEach(l -> out.println("        " + l));
        if (lines.size() > MAX_FAILURE_LINES) {
            out.println("        ... (" + (lines.size() - MAX_FAILURE_LINES) + " more lines)");
        }
    }

    private static String describe(Throwable t) {
        String message = t.getMessage() == null ? t.getClass().getName() : t.getMessage();
        return t instanceof AssertionError ? message : t.getClass().getSimpleName() + ": " + message;
    }

    private static String name(TestIdentifier test) {
        Optional<String> method =
                test.getSource().filter(MethodSource.class::isInstance).map(s -> ((MethodSource) s).getMethodName());
        return method.orElse(test.getDisplayName());
    }

    /** Tests that passed. */
    public int passed() {
        return passed;
    }

    /** Names of the tests that failed. */
    public List<String> failed() {
        return failed;
    }

    /** Tests skipped, each with its reason printed. */
    public int skipped() {
        return skipped;
    }
}
