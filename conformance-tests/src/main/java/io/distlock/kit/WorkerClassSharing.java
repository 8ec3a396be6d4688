package io.distlock.kit;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Class data sharing for the kit's worker JVMs: the first worker of a test JVM that exits by itself writes the
 * classes it loaded to an archive ({@code -XX:ArchiveClassesAtExit}), and the workers started after it map them from
 * there ({@code -XX:SharedArchiveFile}) instead of loading and verifying them again. A worker started that way reached
 * its first grant in about half the time (0.43-0.6 s against 0.7-1.1 s on Redis, 2 cores), and the multi-process
 * contracts start hundreds of workers in a run.
 *
 * <p>The JVM archives classes from jars only and refuses a classpath with a non-empty directory (a build's {@code
 * classes} and {@code test-classes}), so the workers get this JVM's classpath with each directory packed into a jar of
 * its own, once per test JVM; a surefire manifest-only booter jar is read for the classpath it names. The jars and the
 * archive live in a directory under {@code java.io.tmpdir} and go when this JVM exits. The workers' JVM warnings go to
 * their stderr, never to the stdout the kit reads, without class sharing's own (the classes it skipped while writing
 * the archive: dozens of lines in the stderr a failing test shows). Anything that fails here leaves the workers on this
 * JVM's classpath as it is, without sharing; {@code -Ddistlock.kit.workerClassSharing=false} turns it off.
 */
final class WorkerClassSharing {

    /** The system property that turns sharing off ({@code false}). */
    static final String PROPERTY = "distlock.kit.workerClassSharing";

    /** How many workers may try to write the archive: one killed before it exits leaves the turn to the next. */
    private static final int DUMP_ATTEMPTS = 3;

    private static final Logger LOG = LoggerFactory.getLogger(WorkerClassSharing.class);

    private static WorkerClassSharing instance;

    private final String classpath;
    private final Path archive;
    /** Guarded by this. */
    private boolean dumping;
    /** Guarded by this. */
    private int dumpAttempts;

    private WorkerClassSharing(String classpath, Path archive) {
        this.classpath = classpath;
        this.archive = archive;
    }

    /** This JVM's sharing, made on first use; empty when it is off or could not be set up. */
    static synchronized Optional<WorkerClassSharing> get() {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            return Optional.empty();
        }
        if (instance == null) {
            try {
                instance = setUp();
            } catch (IOException | RuntimeException e) {
                LOG.info("Worker JVMs start without class data sharing: {}", e.toString());
                instance = new WorkerClassSharing(null, null);
            }
        }
        return instance.classpath == null ? Optional.empty() : Optional.of(instance);
    }

    /** The classpath the workers get: this JVM's, with every directory packed into a jar. */
    String classpath() {
        return classpath;
    }

    /**
     * The JVM flags for the next worker: the archive once written, the request to write it if no worker is writing it
     * now, else none. A worker given the request ({@link Flags#writes}) calls {@link #exited} with its process.
     */
    synchronized Flags flags() {
        List<String> flags = new ArrayList<>(List.of("-Xlog:disable", "-Xlog:all=warning,cds*=off:stderr"));
        if (Files.isRegularFile(archive)) {
            flags.add("-XX:SharedArchiveFile=" + archive);
        } else if (!dumping && dumpAttempts < DUMP_ATTEMPTS) {
            dumping = true;
            dumpAttempts++;
            flags.add("-XX:ArchiveClassesAtExit=" + writing(archive));
            return new Flags(flags, true);
        }
        return new Flags(flags, false);
    }

    /** A worker's JVM flags ({@code jvm}), and whether they ask it to write the archive ({@code writes}). */
    record Flags(List<String> jvm, boolean writes) {

        /** No sharing: no flags. */
        static final Flags NONE = new Flags(List.of(), false);

        Flags {
            jvm = List.copyOf(jvm);
        }
    }

    /**
     * The worker that was to write the archive has exited: the archive it wrote, if it exited by itself, is the
     * workers' from now on; if it was killed, the next worker started writes it.
     */
    synchronized void exited(Process worker) {
        dumping = false;
        Path written = writing(archive);
        try {
            if (worker.exitValue() == 0 && Files.isRegularFile(written) && Files.size(written) > 0) {
                Files.move(written, archive, StandardCopyOption.ATOMIC_MOVE);
                archive.toFile().deleteOnExit();
                LOG.debug("Worker JVMs share the classes archived in {}", archive);
            } else {
                Files.deleteIfExists(written);
            }
        } catch (IOException e) {
            LOG.info("Worker JVMs start without class data sharing: {}", e.toString());
        }
    }

    /** Where a worker writes the archive {@code archive} before it is moved into place. */
    private static Path writing(Path archive) {
        return archive.resolveSibling(archive.getFileName() + ".writing");
    }

    /** A sharing of its own: this JVM's classpath packed again into a new directory, no archive yet. */
    static WorkerClassSharing setUp() throws IOException {
        Path dir = Files.createTempDirectory("distlock-kit-workers-");
        dir.toFile().deleteOnExit();
        List<String> entries = new ArrayList<>();
        int packed = 0;
        for (Path entry : classpathEntries()) {
            if (Files.isDirectory(entry)) {
                if (isEmpty(entry)) {
                    continue;
                }
                Path jar = dir.resolve("classes-" + packed++ + ".jar");
                pack(entry, jar);
                jar.toFile().deleteOnExit();
                entries.add(jar.toString());
            } else if (Files.exists(entry)) {
                entries.add(entry.toString());
            }
        }
        Path archive = dir.resolve("workers.jsa");
        writing(archive).toFile().deleteOnExit();
        return new WorkerClassSharing(String.join(File.pathSeparator, entries), archive);
    }

    /** This JVM's classpath, read through a manifest-only jar (surefire's booter) to the entries it names. */
    private static List<Path> classpathEntries() throws IOException {
        List<Path> entries = new ArrayList<>();
        for (String part : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (part.isEmpty()) {
                continue;
            }
            Path path = Paths.get(part).toAbsolutePath();
            List<Path> named = manifestClassPath(path);
            if (named.isEmpty()) {
                entries.add(path);
            } else {
                entries.addAll(named);
            }
        }
        return entries;
    }

    /**
     * The entries a manifest-only jar (one that holds nothing outside {@code META-INF}) names in its {@code Class-Path};
     * empty for any other file. A jar with classes of its own stays as it is, the JVM reading its {@code Class-Path}.
     */
    static List<Path> manifestClassPath(Path path) throws IOException {
        if (!Files.isRegularFile(path) || !path.toString().endsWith(".jar")) {
            return List.of();
        }
        String classPath;
        try (JarFile jar = new JarFile(path.toFile())) {
            if (jar.stream().anyMatch(e -> !e.getName().startsWith("META-INF/"))) {
                return List.of();
            }
            Manifest manifest = jar.getManifest();
            classPath = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
        }
        if (classPath == null || classPath.isBlank()) {
            return List.of();
        }
        List<Path> entries = new ArrayList<>();
        URL base = path.toUri().toURL();
        for (String item : classPath.trim().split("\\s+")) {
            try {
                entries.add(Paths.get(new URL(base, item).toURI()));
            } catch (MalformedURLException | URISyntaxException | IllegalArgumentException e) {
                throw new IOException("cannot read the Class-Path entry '" + item + "' of " + path, e);
            }
        }
        return entries;
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.findAny().isEmpty();
        }
    }

    /** Packs the files and directories under {@code dir} into {@code jar}, uncompressed (each worker reads it). */
    private static void pack(Path dir, Path jar) throws IOException {
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(dir)) {
            paths = walk.filter(p -> !p.equals(dir)).sorted().toList();
        }
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream zip = new JarOutputStream(out)) {
            zip.setLevel(0);
            for (Path path : paths) {
                String name = dir.relativize(path).toString().replace(File.separatorChar, '/');
                boolean directory = Files.isDirectory(path);
                zip.putNextEntry(new ZipEntry(directory ? name + "/" : name));
                if (!directory) {
                    Files.copy(path, zip);
                }
                zip.closeEntry();
            }
        }
    }
}
