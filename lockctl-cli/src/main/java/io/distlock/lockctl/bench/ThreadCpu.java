package io.distlock.lockctl.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Where a worker JVM's CPU went: the CPU time, the voluntary context switches (each time a thread gave up the CPU to
 * wait, so about how often it was woken) and the heap allocated by one group of its threads over the measured part.
 * Threads named alike but for their digits are one group: {@code pool-4-thread-1} and {@code pool-4-thread-2} are
 * {@code pool-N-thread-N}.
 *
 * <p>Read from Linux's {@code /proc/self/task}, with the threads' names from HotSpot's thread dump (the kernel keeps
 * only their first 15 characters). Elsewhere, nothing is reported. A thread that ended during the measured part is
 * missing from its group.
 *
 * @param threads the group's name, every run of digits written {@code N}
 * @param cpuNanos the group's CPU time (user + system)
 * @param switches the group's voluntary context switches
 * @param allocatedBytes the heap its Java threads allocated (HotSpot's per-thread count; 0 for the JVM's own threads)
 */
public record ThreadCpu(String threads, long cpuNanos, long switches, long allocatedBytes) {

    private static final Path TASKS = Path.of("/proc/self/task");
    private static final Pattern DIGITS = Pattern.compile("[0-9]+");
    /** A thread's line in HotSpot's thread dump: {@code "name" #12 daemon prio=5 ... nid=0x1f3a waiting ...}. */
    private static final Pattern DUMP_LINE =
            Pattern.compile("^\"(.*)\"\\s.*?\\bnid=0x([0-9a-fA-F]+)", Pattern.MULTILINE);

    /** The group of a thread named {@code name}. */
    static String group(String name) {
        return DIGITS.matcher(name).replaceAll("N");
    }

    /** Every group of this JVM's threads now, by name; empty where {@code /proc/self/task} cannot be read. */
    static Map<String, ThreadCpu> snapshot() {
        Map<String, ThreadCpu> groups = new HashMap<>();
        if (!Files.isDirectory(TASKS)) {
            return groups;
        }
        Map<Long, String> names = javaNames();
        try (Stream<Path> tasks = Files.list(TASKS)) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                read(task, names).ifPresent(t -> groups.merge(t.threads(), t, ThreadCpu::plus));
            }
        } catch (IOException unreadable) {
            return Map.of();
        }
        allocated().forEach((group, bytes) -> groups.merge(group, new ThreadCpu(group, 0, 0, bytes), ThreadCpu::plus));
        return groups;
    }

    /** Heap allocated so far by this JVM's live Java threads, by group; empty where the JVM does not count it. */
    private static Map<String, Long> allocated() {
        Map<String, Long> groups = new HashMap<>();
        if (!(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean threads)
                || !threads.isThreadAllocatedMemoryEnabled()) {
            return groups;
        }
        long[] ids = threads.getAllThreadIds();
        long[] bytes = threads.getThreadAllocatedBytes(ids);
        ThreadInfo[] infos = threads.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] != null && bytes[i] >= 0) {
                groups.merge(group(infos[i].getThreadName()), bytes[i], Long::sum);
            }
        }
        return groups;
    }

    /** The groups' use from {@code before} to now, the largest CPU first; groups that used nothing left out. */
    static List<ThreadCpu> since(Map<String, ThreadCpu> before) {
        List<ThreadCpu> used = new ArrayList<>();
        for (ThreadCpu now : snapshot().values()) {
            ThreadCpu then = before.getOrDefault(now.threads(), new ThreadCpu(now.threads(), 0, 0, 0));
            // a group whose threads ended may have less than before: what its remaining threads used is not known
            ThreadCpu d = new ThreadCpu(
                    now.threads(),
                    Math.max(0, now.cpuNanos() - then.cpuNanos()),
                    Math.max(0, now.switches() - then.switches()),
                    Math.max(0, now.allocatedBytes() - then.allocatedBytes()));
            if (d.cpuNanos() > 0 || d.switches() > 0 || d.allocatedBytes() > 0) {
                used.add(d);
            }
        }
        used.sort(Comparator.comparingLong(ThreadCpu::cpuNanos).reversed());
        return used;
    }

    private ThreadCpu plus(ThreadCpu other) {
        return new ThreadCpu(
                threads, cpuNanos + other.cpuNanos, switches + other.switches, allocatedBytes + other.allocatedBytes);
    }

    /** One thread: its CPU time from {@code schedstat} (nanoseconds), its switches from {@code status}. */
    private static Optional<ThreadCpu> read(Path task, Map<Long, String> names) {
        try {
            long tid = Long.parseLong(task.getFileName().toString());
            String name = names.get(tid);
            if (name == null) {
                name = Files.readString(task.resolve("comm")).strip();
            }
            long cpu = Long.parseLong(
                    Files.readString(task.resolve("schedstat")).strip().split(" ")[0]);
            long switches = 0;
            for (String line : Files.readAllLines(task.resolve("status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    switches =
                            Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                }
            }
            return Optional.of(new ThreadCpu(group(name), cpu, switches, 0));
        } catch (IOException | RuntimeException ended) {
            return Optional.empty(); // the thread ended meanwhile
        }
    }

    /** Native thread id to Java thread name, from HotSpot's thread dump; empty on another JVM. */
    private static Map<Long, String> javaNames() {
        Map<Long, String> names = new HashMap<>();
        try {
            String dump = (String) ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "threadPrint",
                            new Object[] {new String[0]},
                            new String[] {String[].class.getName()});
            Matcher m = DUMP_LINE.matcher(dump);
            while (m.find()) {
                names.put(Long.parseLong(m.group(2), 16), m.group(1));
            }
        } catch (JMException | RuntimeException notHotSpot) {
            // the kernel's 15 characters then
        }
        return names;
    }
}
