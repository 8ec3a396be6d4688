package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker JVMs' classpath and class data sharing ({@link WorkerClassSharing}), on this JVM's own classpath. */
class WorkerClassSharingTest {

    /** A program that exits at once, with 0, as a worker does when it is done. */
    public static final class ExitsAtOnce {
        public static void main(String[] args) {}
    }

    @Test
    void classpath_holdsJarsOnly_andTheyHoldTheKitsClassesAndThisTest() throws IOException {
        WorkerClassSharing sharing = WorkerClassSharing.setUp();
        List<String> missing = new ArrayList<>(List.of(
                WorkerMain.class.getName().replace('.', '/') + ".class",
                ExitsAtOnce.class.getName().replace('.', '/') + ".class"));
        for (String entry : sharing.classpath().split(File.pathSeparator)) {
            Path path = Paths.get(entry);
            assertTrue(Files.isRegularFile(path), "a classpath entry that is not a file: " + entry);
            try (JarFile jar = new JarFile(path.toFile())) {
                missing.removeIf(name -> jar.getEntry(name) != null);
            }
        }
        assertEquals(List.of(), missing, "classes no jar of the workers' classpath holds");
    }

    @Test
    void firstWorkerExitingByItself_writesTheArchive_andTheNextOnesMapIt() throws Exception {
        WorkerClassSharing sharing = WorkerClassSharing.setUp();
        WorkerClassSharing.Flags first = sharing.flags();
        assertTrue(first.writes(), "the first worker is not asked to write the archive: " + first);
        assertTrue(
                first.jvm().stream().anyMatch(f -> f.startsWith("-XX:ArchiveClassesAtExit=")),
                "the first worker's flags do not ask for the archive: " + first);
        assertFalse(sharing.flags().writes(), "two workers asked to write it at once");

        Process writer = run(sharing, first.jvm());
        assertEquals(0, writer.waitFor(), "the worker writing the archive failed: " + stderrOf(writer));
        sharing.exited(writer);

        List<String> next = sharing.flags().jvm();
        assertTrue(
                next.stream().anyMatch(f -> f.startsWith("-XX:SharedArchiveFile=")),
                "a worker after the archive was written does not map it: " + next);
        List<String> strict = new ArrayList<>(next);
        strict.add("-Xshare:on"); // the JVM refuses to start if it cannot map the archive
        Process reader = run(sharing, strict);
        assertEquals(0, reader.waitFor(), "a worker could not map the archive: " + stderrOf(reader));
    }

    @Test
    void aWriterKilledBeforeItExits_leavesTheArchiveToTheNextWorker() throws Exception {
        WorkerClassSharing sharing = WorkerClassSharing.setUp();
        WorkerClassSharing.Flags first = sharing.flags();
        Process killed = new ProcessBuilder("sleep", "30").start();
        killed.destroyForcibly();
        killed.waitFor(10, TimeUnit.SECONDS);
        sharing.exited(killed);
        assertTrue(first.writes());
        assertTrue(sharing.flags().writes(), "no worker asked to write the archive after a kill");
    }

    @Test
    void aManifestOnlyJar_standsForTheEntriesItNames_aJarWithClassesForItself(@TempDir Path dir) throws IOException {
        Path classes = Files.createDirectories(dir.resolve("classes"));
        Path library = dir.resolve("library.jar");
        Path booter = dir.resolve("booter.jar");
        writeJar(library, "lib/dependency.jar", "io/example/Library.class");
        writeJar(booter, "library.jar classes/", null);
        assertEquals(
                List.of(library, classes),
                WorkerClassSharing.manifestClassPath(booter),
                "the entries of a manifest-only jar");
        assertEquals(
                List.of(), WorkerClassSharing.manifestClassPath(library), "a jar with classes of its own is expanded");
    }

    /** A jar whose manifest names {@code classPath}, holding {@code entry} (if not null) besides it. */
    private static void writeJar(Path jar, String classPath, String entry) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, classPath);
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
            if (entry != null) {
                out.putNextEntry(new ZipEntry(entry));
                out.write(new byte[] {(byte) 0xCA, (byte) 0xFE});
                out.closeEntry();
            }
        }
    }

    private static Process run(WorkerClassSharing sharing, List<String> flags) throws IOException {
        List<String> command = new ArrayList<>(List.of(java(), "-Xmx64m"));
        command.addAll(flags);
        command.addAll(List.of("-cp", sharing.classpath(), ExitsAtOnce.class.getName()));
        return new ProcessBuilder(command).start();
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String stderrOf(Process p) throws IOException {
        return new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
