package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.distlock.LockKind;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The README's read-write lock and semaphore examples, built as a user builds them, run where a store offers them. */
class PrimitivesTest {

    /** The first Java block of the README's section {@code heading}. */
    private static String readmeExample(String heading) throws Exception {
        String readme = Files.readString(Path.of(System.getProperty("readme")));
        int section = readme.indexOf("\n" + heading + "\n");
        if (section < 0) {
            throw new AssertionError("no section '" + heading + "' in the README");
        }
        int start = readme.indexOf("```java\n", section) + "```java\n".length();
        return readme.substring(start, readme.indexOf("```", start)).strip();
    }

    private static String sample(String name) throws Exception {
        return Files.readString(Path.of("src/main/java/example/" + name + ".java")).strip();
    }

    @Test
    void readWriteLockExample_isThisFile_asPasted() throws Exception {
        assertEquals(readmeExample("## Read-write locks"), sample("Prices"), "the README's example and Prices.java");
    }

    @Test
    void semaphoreExample_isThisFile_asPasted() throws Exception {
        assertEquals(readmeExample("## Semaphores"), sample("Imports"), "the README's example and Imports.java");
    }

    @Test
    void examples_runOnMemory() throws Exception {
        Prices.main(new String[] {"memory://primitives"});
        Imports.main(new String[] {"memory://primitives"});
    }

    @Test
    void readWriteLockExample_runsOnZooKeeper_whereItOffersThem() throws Exception {
        onZooKeeper(LockKind.READ, "read-write locks", Prices::main);
    }

    @Test
    void semaphoreExample_runsOnZooKeeper_whereItOffersThem() throws Exception {
        onZooKeeper(LockKind.PERMIT, "semaphores", Imports::main);
    }

    private interface Example {
        void main(String[] args) throws Exception;
    }

    /** Runs {@code example} on a ZooKeeper test server if the backend offers {@code kind}; else shows what users see. */
    private static void onZooKeeper(LockKind kind, String what, Example example) throws Exception {
        try (TestingServer zk = new TestingServer()) {
            String uri = "zk://" + zk.getConnectString() + "/locks?ttl=10s";
            try (RemoteLocker locker = RemoteLockers.open(uri)) {
                if (!locker.capabilities().offers(kind)) {
                    assertThrows(UnsupportedOperationException.class, () -> example.main(new String[] {uri}));
                }
                Assumptions.assumeTrue(
                        locker.capabilities().offers(kind),
                        "the ZooKeeper backend offers no " + what + " yet: " + locker.capabilities().kinds());
            }
            example.main(new String[] {uri});
        }
    }
}
