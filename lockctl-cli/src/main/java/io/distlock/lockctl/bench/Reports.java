package io.distlock.lockctl.bench;

import io.distlock.spi.Redaction;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The human side of a {@link BenchReport}: the text summary, the PNG charts and the HTML page. */
public final class Reports {

    private static final int MAX_POINTS = 2_000;

    /** The share of a run's CPU below which a group of threads is counted among the others. */
    private static final double SHOWN_SHARE = 0.02;

    private Reports() {}

    /**
     * The summary of a run: ratios first.
     *
     * @param cpuTables with, per process count, where the CPU went per group of the workers' threads (else a line
     *     saying where to find it)
     */
    public static String text(BenchReport report, boolean cpuTables) {
        StringBuilder s = new StringBuilder();
        if (!report.comparisons().isEmpty()) {
            s.append("\nContended")
                    .append(
                            report.workload().name().equals(Workload.LOCK_NAME)
                                    ? ""
                                    : ", workload " + report.workload().describe())
                    .append(" (median over rounds; ratios: median of paired ratios against ")
                    .append(Redaction.uri(report.stores().get(0)))
                    .append(")\n");
            s.append(String.format(
                    Locale.ROOT,
                    "%-5s %-40s %9s %7s %9s %9s %9s %9s %9s %7s %8s %8s%n",
                    processesHeader(report),
                    "store",
                    "acq/s",
                    "rate x",
                    "mean ms",
                    "p99 ms",
                    "max ms",
                    "handoff/s",
                    "handoff ms",
                    "Jain",
                    "req/acq",
                    "cpu ms"));
            for (Comparison c : report.comparisons()) {
                s.append(String.format(
                        Locale.ROOT,
                        "%-5s %-40s %9.1f %7.2f %9.2f %9.2f %9.2f %9.1f %9.2f %7.4f %8s %8.3f%n",
                        processes(c.processes(), c.threads()),
                        shorten(c.store()),
                        c.acquisitionsPerSecond(),
                        c.rateRatio(),
                        c.meanWaitMs(),
                        c.p99WaitMs(),
                        c.maxWaitMs(),
                        c.handOffsPerSecond(),
                        c.meanHandOffMs(),
                        c.jain(),
                        c.storeRequestsPerAcquisition() == null
                                ? "-"
                                : String.format(Locale.ROOT, "%.2f", c.storeRequestsPerAcquisition()),
                        c.cpuMsPerAcquisition()));
            }
            if (report.stores().size() > 1) {
                s.append("Paired ratios of acquisitions per second (rate x) range per row: ");
                List<String> ranges = new ArrayList<>();
                for (Comparison c : report.comparisons()) {
                    if (c.storeIndex() > 0) {
                        ranges.add(String.format(
                                Locale.ROOT,
                                "%s %s %.2f-%.2f",
                                processesShown(c.processes(), c.threads()),
                                shorten(c.store()),
                                c.rateRatioMin(),
                                c.rateRatioMax()));
                    }
                }
                s.append(String.join("; ", ranges)).append('\n');
            }
            appendWorkload(s, report);
            if (cpuTables) {
                appendCpuByThread(s, report);
            } else if (report.runs().stream()
                    .anyMatch(r -> !r.summary().cpuByThread().isEmpty())) {
                s.append(
                        "Where the CPU goes, per group of the workers' threads: summary.txt in the report, or --cpu\n");
            }
            for (RunData run : report.runs()) {
                RunSummary r = run.summary();
                if (r.keys() > 1 && r.acquisitionsPerKey() != null) {
                    s.append(String.format(
                            Locale.ROOT,
                            "Round %d, %s, %s: %d keys, acquisitions per key %s, hand-offs per key %s%n",
                            r.round(),
                            processesShown(r.processes(), r.threads()),
                            shorten(r.store()),
                            r.keys(),
                            r.acquisitionsPerKey(),
                            r.handOffsPerKey()));
                }
            }
        }
        if (!report.uncontended().isEmpty()) {
            s.append("\nUncontended acquire+release (ratio: median over rounds of mean / ")
                    .append(Redaction.uri(report.stores().get(0)))
                    .append("'s mean)\n");
            s.append(String.format(
                    Locale.ROOT,
                    "%-40s %9s %9s %9s %9s %7s %8s%n",
                    "store",
                    "mean ms",
                    "p50 ms",
                    "p99 ms",
                    "max ms",
                    "ratio",
                    "req/acq"));
            for (UncontendedSummary u : report.uncontended()) {
                s.append(String.format(
                        Locale.ROOT,
                        "%-40s %9.3f %9.3f %9.3f %9.3f %7.2f %8s%n",
                        shorten(u.store()),
                        u.meanMs(),
                        u.p50Ms(),
                        u.p99Ms(),
                        u.maxMs(),
                        u.ratio(),
                        u.storeRequestsPerAcquisition() == null
                                ? "-"
                                : String.format(Locale.ROOT, "%.2f", u.storeRequestsPerAcquisition())));
            }
        }
        appendFailover(s, report);
        String heldWhat = report.workload().readWrite()
                ? "read"
                : report.workload().name().equals(Workload.SEMAPHORE_NAME) ? "permit" : "lock";
        for (BenchReport.HeldSummary h : report.heapPerHeldLockBytes()) {
            s.append(String.format(
                    Locale.ROOT,
                    "%nClient heap per held %s, %d %ss held by one locker of %s: %.0f bytes%n",
                    heldWhat,
                    h.held(),
                    heldWhat,
                    shorten(h.store()),
                    h.bytesPerLock()));
        }
        s.append("\nReproduce: ").append(Redaction.uri(report.command())).append('\n');
        return s.toString();
    }

    /** {@code --workload failover}: per store and kind of round, the hand-over's median, p99, max, paired ratio. */
    private static void appendFailover(StringBuilder s, BenchReport report) {
        if (report.failover().isEmpty()) {
            return;
        }
        s.append("\nFailover: from the leader's step-down call, or the SIGKILL of its JVM, to the next leader's first")
                .append(" 'you lead' (ratio: median of paired ratios against ")
                .append(Redaction.uri(report.stores().get(0)))
                .append(")\n");
        s.append(String.format(
                Locale.ROOT,
                "%-10s %-40s %6s %10s %10s %10s %7s %13s%n",
                "kind",
                "store",
                "rounds",
                "median ms",
                "p99 ms",
                "max ms",
                "ratio",
                "ratio range"));
        for (Failover.Summary f : report.failover()) {
            s.append(String.format(
                    Locale.ROOT,
                    "%-10s %-40s %6d %10.2f %10.2f %10.2f %7s %13s%n",
                    f.kind(),
                    shorten(f.store()),
                    f.rounds(),
                    f.medianMs(),
                    f.p99Ms(),
                    f.maxMs(),
                    f.ratio() == null ? "-" : String.format(Locale.ROOT, "%.2f", f.ratio()),
                    f.ratio() == null ? "-" : String.format(Locale.ROOT, "%.2f-%.2f", f.ratioMin(), f.ratioMax())));
        }
    }

    /**
     * The workload's own lines: for a read-write workload the rate of each side; for every workload the most holds of
     * one key seen at once, and any grant that broke the workload's rule (an exclusion violated), loudly.
     */
    private static void appendWorkload(StringBuilder s, BenchReport report) {
        for (Comparison c : report.comparisons()) {
            if (c.readsPerSecond() != null) {
                s.append(String.format(
                        Locale.ROOT,
                        "%s %s: reads %.1f/s%s, writes %.1f/s%s, at most %d holds of the key at once%n",
                        processesShown(c.processes(), c.threads()),
                        shorten(c.store()),
                        c.readsPerSecond(),
                        ratioText(c.storeIndex(), c.readRatio()),
                        c.writesPerSecond(),
                        ratioText(c.storeIndex(), c.writeRatio()),
                        c.mostHeldAtOnce()));
            } else if (!report.workload().name().equals(Workload.LOCK_NAME)) {
                s.append(String.format(
                        Locale.ROOT,
                        "%s %s: at most %d holds of the key at once%n",
                        processesShown(c.processes(), c.threads()),
                        shorten(c.store()),
                        c.mostHeldAtOnce()));
            }
        }
        for (RunData run : report.runs()) {
            RunSummary r = run.summary();
            if (r.violations() > 0) {
                s.append(String.format(
                        Locale.ROOT,
                        "VIOLATION: round %d, %s, %s: %d grant(s) broke the %s rule; first: %s%n",
                        r.round(),
                        processesShown(r.processes(), r.threads()),
                        shorten(r.store()),
                        r.violations(),
                        r.workload(),
                        r.firstViolation()));
            }
        }
    }

    private static String ratioText(int storeIndex, Double ratio) {
        return storeIndex == 0 || ratio == null ? "" : String.format(Locale.ROOT, " (x %.2f)", ratio);
    }

    /**
     * Per process count, where each store's CPU per acquisition went: the workers' thread groups that took at least
     * {@link #SHOWN_SHARE} of some store's CPU, with the median over rounds of their CPU and wake-ups per acquisition.
     */
    private static void appendCpuByThread(StringBuilder s, BenchReport report) {
        List<Integer> counts = report.comparisons().stream()
                .map(Comparison::processes)
                .distinct()
                .toList();
        for (int p : counts) {
            List<Comparison> row = report.comparisons().stream()
                    .filter(c -> c.processes() == p)
                    .toList();
            List<List<RunSummary>> runs = new ArrayList<>();
            for (Comparison c : row) {
                runs.add(report.runs().stream()
                        .map(RunData::summary)
                        .filter(r -> r.processes() == p && r.storeIndex() == c.storeIndex())
                        .filter(r -> !r.cpuByThread().isEmpty())
                        .toList());
            }
            if (runs.stream().allMatch(List::isEmpty)) {
                continue;
            }
            // the groups, the largest first in the first store that has them
            Set<String> groups = new LinkedHashSet<>();
            for (int i = 0; i < row.size(); i++) {
                for (RunSummary r : runs.get(i)) {
                    for (RunSummary.ThreadShare t : r.cpuByThread()) {
                        if (t.cpuMsPerAcquisition() >= SHOWN_SHARE * r.cpuMsPerAcquisition()) {
                            groups.add(t.threads());
                        }
                    }
                }
            }
            s.append(String.format(
                    Locale.ROOT,
                    "Where the CPU goes, %s (per acquisition, median over rounds: microseconds of CPU / voluntary"
                            + " context switches, about the wake-ups / bytes allocated; threads named alike but for"
                            + " their digits as one)%n",
                    processesShown(p, row.get(0).threads())));
            StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-34s", "threads"));
            for (Comparison c : row) {
                header.append(String.format(Locale.ROOT, " %40s", shorten(c.store())));
            }
            s.append(header).append('\n');
            for (String g : groups) {
                s.append(cpuRow(tail(g, 34), runs, r -> shareOf(r, g)));
            }
            s.append(cpuRow("other threads", runs, r -> {
                double[] all = {0, 0, 0};
                for (RunSummary.ThreadShare t : r.cpuByThread()) {
                    if (!groups.contains(t.threads())) {
                        all[0] += t.cpuMsPerAcquisition();
                        all[1] += t.switchesPerAcquisition();
                        all[2] += t.allocatedBytesPerAcquisition();
                    }
                }
                return all;
            }));
            s.append(cpuRow("all threads (the run's CPU)", runs, r -> new double[] {
                r.cpuMsPerAcquisition(),
                Double.NaN,
                r.cpuByThread().stream()
                        .mapToDouble(RunSummary.ThreadShare::allocatedBytesPerAcquisition)
                        .sum()
            }));
        }
    }

    private static double[] shareOf(RunSummary run, String group) {
        for (RunSummary.ThreadShare t : run.cpuByThread()) {
            if (t.threads().equals(group)) {
                return new double[] {
                    t.cpuMsPerAcquisition(), t.switchesPerAcquisition(), t.allocatedBytesPerAcquisition()
                };
            }
        }
        return new double[] {0, 0, 0};
    }

    /** One line of the table: per store, the medians over its runs of {CPU ms, switches, bytes} per acquisition. */
    private static String cpuRow(String label, List<List<RunSummary>> runs, Function<RunSummary, double[]> figures) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-34s", label));
        for (List<RunSummary> store : runs) {
            if (store.isEmpty()) {
                line.append(String.format(Locale.ROOT, " %40s", "-"));
                continue;
            }
            double cpu =
                    Stats.median(store.stream().map(r -> figures.apply(r)[0]).toList());
            double switches =
                    Stats.median(store.stream().map(r -> figures.apply(r)[1]).toList());
            double bytes =
                    Stats.median(store.stream().map(r -> figures.apply(r)[2]).toList());
            String cell = Double.isNaN(switches)
                    ? String.format(Locale.ROOT, "%.1f / - / %.0f", cpu * 1000, bytes)
                    : String.format(Locale.ROOT, "%.1f / %.2f / %.0f", cpu * 1000, switches, bytes);
            line.append(String.format(Locale.ROOT, " %40s", cell));
        }
        return line.append('\n').toString();
    }

    /** The last {@code width} characters of {@code text}, marked with an ellipsis when cut. */
    private static String tail(String text, int width) {
        return text.length() <= width ? text : "..." + text.substring(text.length() - width + 3);
    }

    /** Writes the charts and {@code index.html} into {@code dir}; returns the chart files written. */
    public static List<Path> write(BenchReport report, Path dir) throws IOException {
        List<Path> charts = new ArrayList<>();
        if (!report.runs().isEmpty()) {
            int maxP = report.runs().stream()
                    .mapToInt(r -> r.summary().processes())
                    .max()
                    .orElse(1);
            List<RunData> firstRound = report.runs().stream()
                    .filter(r -> r.summary().round() == 1 && r.summary().processes() == maxP)
                    .toList();
            for (RunData run : firstRound) {
                Path file = dir.resolve("figure1-store" + run.summary().storeIndex() + "-p" + maxP + ".png");
                save(figure1(run), file);
                charts.add(file);
            }
            Path cdf = dir.resolve("waits-p" + maxP + ".png");
            save(waitDistribution(firstRound, maxP), cdf);
            charts.add(cdf);
        }
        Files.writeString(dir.resolve("index.html"), html(report, charts), StandardCharsets.UTF_8);
        return charts;
    }

    /**
     * Seed 000's Figure 1: x = acquisition number, y = ms since the start, one line per process (per thread of each
     * process when a process runs several).
     */
    static XYChart figure1(RunData run) {
        RunSummary s = run.summary();
        XYChart chart = new XYChartBuilder()
                .width(900)
                .height(560)
                .title(String.format(
                        Locale.ROOT,
                        "%s: %d processes%s x %d acquisitions",
                        shorten(s.store()),
                        s.processes(),
                        threadsShown(s.threads()),
                        s.acquisitions() / (s.processes() * s.threads())))
                .xAxisTitle("acquisition number")
                .yAxisTitle("ms since the start")
                .build();
        chart.getStyler().setLegendVisible(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setXAxisDecimalPattern("0");
        chart.getStyler().setYAxisDecimalPattern("0");
        for (int p = 0; p < run.grantMs().size(); p++) {
            double[] y = run.grantMs().get(p);
            double[] x = new double[y.length];
            for (int i = 0; i < x.length; i++) {
                x[i] = i + 1;
            }
            double[][] xy = thin(x, y);
            String party = s.threads() == 1
                    ? "process " + (p + 1)
                    : "process " + (p / s.threads() + 1) + " thread " + (p % s.threads() + 1);
            XYSeries series = chart.addSeries(party, xy[0], xy[1]);
            series.setMarker(SeriesMarkers.NONE);
        }
        return chart;
    }

    /** The distribution of waits: the CDF per store, waits on a log scale. */
    static XYChart waitDistribution(List<RunData> runs, int processes) {
        XYChart chart = new XYChartBuilder()
                .width(900)
                .height(560)
                .title("Wait for the lock, " + processes + " processes"
                        + threadsShown(
                                runs.isEmpty() ? 1 : runs.get(0).summary().threads())
                        + " (CDF)")
                .xAxisTitle("wait (ms, log scale)")
                .yAxisTitle("fraction of acquisitions")
                .build();
        chart.getStyler().setXAxisLogarithmic(true);
        // a fraction: 0 to 1 in tenths (left to itself the axis labels every 0.01-0.03, one on top of another)
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(1.0);
        chart.getStyler().setYAxisTickMarkSpacingHint(45);
        chart.getStyler().setYAxisDecimalPattern("0.0");
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
        for (RunData run : runs) {
            double[] waits =
                    run.waitMs().stream().flatMapToDouble(Arrays::stream).toArray();
            Arrays.sort(waits);
            double[] x = new double[waits.length];
            double[] y = new double[waits.length];
            for (int i = 0; i < waits.length; i++) {
                x[i] = Math.max(waits[i], 0.001); // a log axis has no zero
                y[i] = (i + 1) / (double) waits.length;
            }
            double[][] xy = thin(x, y);
            XYSeries series = chart.addSeries(
                    "store " + (run.summary().storeIndex() + 1) + ": "
                            + shorten(run.summary().store()),
                    xy[0],
                    xy[1]);
            series.setMarker(SeriesMarkers.NONE);
        }
        return chart;
    }

    private static void save(XYChart chart, Path file) throws IOException {
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** At most {@value #MAX_POINTS} evenly spaced points, always keeping the last. */
    private static double[][] thin(double[] x, double[] y) {
        if (x.length <= MAX_POINTS) {
            return new double[][] {x, y};
        }
        double stride = x.length / (double) MAX_POINTS;
        double[] tx = new double[MAX_POINTS];
        double[] ty = new double[MAX_POINTS];
        for (int i = 0; i < MAX_POINTS; i++) {
            int at = i == MAX_POINTS - 1 ? x.length - 1 : (int) (i * stride);
            tx[i] = x[at];
            ty[i] = y[at];
        }
        return new double[][] {tx, ty};
    }

    private static String html(BenchReport report, List<Path> charts) {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>lockctl bench</title>\n")
                .append("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}")
                .append("td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}")
                .append("td:first-child,th:first-child{text-align:left}img{max-width:100%}</style>")
                .append("</head><body>\n<h1>lockctl bench</h1>\n");
        h.append("<p>").append(escape(report.environment())).append("</p>\n");
        h.append("<p>Reproduce: <code>")
                .append(escape(Redaction.uri(report.command())))
                .append("</code></p>\n");
        if (!report.comparisons().isEmpty()) {
            h.append("<h2>Contended</h2>\n<p>Median over rounds; ratios are medians of paired ratios against ")
                    .append(escape(Redaction.uri(report.stores().get(0))))
                    .append(" (rate x &gt; 1: more acquisitions per second).</p>\n");
            table(
                    h,
                    List.of(
                            processesHeader(report),
                            "store",
                            "acq/s",
                            "rate x",
                            "pairs",
                            "mean wait ms",
                            "p99 ms",
                            "max ms",
                            "hand-offs/s",
                            "hand-off ms",
                            "Jain",
                            "requests/acq",
                            "CPU ms/acq"),
                    report.comparisons().stream()
                            .map(c -> List.of(
                                    processes(c.processes(), c.threads()),
                                    Redaction.uri(c.store()),
                                    fmt("%.1f", c.acquisitionsPerSecond()),
                                    fmt("%.2f", c.rateRatio()),
                                    fmt("%.2f-%.2f", c.rateRatioMin(), c.rateRatioMax()),
                                    fmt("%.2f", c.meanWaitMs()),
                                    fmt("%.2f", c.p99WaitMs()),
                                    fmt("%.2f", c.maxWaitMs()),
                                    fmt("%.1f", c.handOffsPerSecond()),
                                    fmt("%.2f", c.meanHandOffMs()),
                                    fmt("%.4f", c.jain()),
                                    c.storeRequestsPerAcquisition() == null
                                            ? "-"
                                            : fmt("%.2f", c.storeRequestsPerAcquisition()),
                                    fmt("%.3f", c.cpuMsPerAcquisition())))
                            .toList());
        }
        if (!report.uncontended().isEmpty()) {
            h.append("<h2>Uncontended acquire + release</h2>\n");
            table(
                    h,
                    List.of("store", "mean ms", "p50 ms", "p99 ms", "max ms", "ratio", "requests/acq"),
                    report.uncontended().stream()
                            .map(u -> List.of(
                                    Redaction.uri(u.store()),
                                    fmt("%.3f", u.meanMs()),
                                    fmt("%.3f", u.p50Ms()),
                                    fmt("%.3f", u.p99Ms()),
                                    fmt("%.3f", u.maxMs()),
                                    fmt("%.2f", u.ratio()),
                                    u.storeRequestsPerAcquisition() == null
                                            ? "-"
                                            : fmt("%.2f", u.storeRequestsPerAcquisition())))
                            .toList());
        }
        if (!report.heapPerHeldLockBytes().isEmpty()) {
            h.append("<h2>Client heap per held lock</h2>\n");
            table(
                    h,
                    List.of("store", "locks held", "bytes per lock"),
                    report.heapPerHeldLockBytes().stream()
                            .map(x -> List.of(
                                    Redaction.uri(x.store()),
                                    Integer.toString(x.held()),
                                    fmt("%.0f", x.bytesPerLock())))
                            .toList());
        }
        for (Path chart : charts) {
            String name = chart.getFileName().toString();
            h.append("<p><img src=\"")
                    .append(escape(name))
                    .append("\" alt=\"")
                    .append(escape(name))
                    .append("\"></p>\n");
        }
        h.append(
                        "<p>Every table, where the CPU went per group of the workers' threads too:"
                                + " <a href=\"summary.txt\">summary.txt</a>. Raw data: <a href=\"bench.json\">bench.json</a></p>\n")
                .append("</body></html>\n");
        return h.toString();
    }

    private static void table(StringBuilder h, List<String> header, List<List<String>> rows) {
        h.append("<table>\n<tr>");
        header.forEach(c -> h.append("<th>").append(escape(c)).append("</th>"));
        h.append("</tr>\n");
        for (List<String> row : rows) {
            h.append("<tr>");
            row.forEach(c -> h.append("<td>").append(escape(c)).append("</td>"));
            h.append("</tr>\n");
        }
        h.append("</table>\n");
    }

    private static String fmt(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /**
     * For {@code bench.json}: every string written (store URIs, the command line) with the values of secret options and
     * any user-info hidden, as in every message of the library.
     */
    public static com.fasterxml.jackson.databind.Module hidingSecrets() {
        return new com.fasterxml.jackson.databind.module.SimpleModule("distlock-hide-secrets")
                .addSerializer(String.class, new com.fasterxml.jackson.databind.ser.std.StdSerializer<>(String.class) {
                    @Override
                    public void serialize(
                            String value,
                            com.fasterxml.jackson.core.JsonGenerator out,
                            com.fasterxml.jackson.databind.SerializerProvider provider)
                            throws java.io.IOException {
                        out.writeString(Redaction.uri(value));
                    }
                });
    }

    /** The head of the tables' first column: {@code P}, or {@code P x T} when the processes ran several threads. */
    private static String processesHeader(BenchReport report) {
        return report.comparisons().stream().allMatch(c -> c.threads() == 1) ? "P" : "P x T";
    }

    /** A row's processes in the tables: {@code 5}, or {@code 5 x 4} for 5 processes of 4 threads. */
    private static String processes(int processes, int threads) {
        return threads == 1 ? Integer.toString(processes) : processes + " x " + threads;
    }

    /** A run's processes in a line of text: {@code P=5}, or {@code P=5 x T=4} for 5 processes of 4 threads. */
    private static String processesShown(int processes, int threads) {
        return "P=" + processes + (threads == 1 ? "" : " x T=" + threads);
    }

    /** In a chart's title after the processes: nothing, or {@code  x 4 threads} for processes of 4 threads. */
    private static String threadsShown(int threads) {
        return threads == 1 ? "" : " x " + threads + " threads";
    }

    /** A store as shown: its secrets hidden, at most 40 characters. */
    private static String shorten(String store) {
        String shown = Redaction.uri(store);
        return shown.length() <= 40 ? shown : shown.substring(0, 37) + "...";
    }
}
