package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** The README's example of operating locks, built as a user builds it, run on memory: and on ZooKeeper. */
class OperationsTest {

    @Test
    void operationsExample_isThisFile_asPasted() throws Exception {
        String readme = Files.readString(Path.of(System.getProperty("readme")));
        int section = readme.indexOf("\n## Operating locks\n");
        if (section < 0) {
            throw new AssertionError("no section '## Operating locks' in the README");
        }
        int start = readme.indexOf("```java\n", section) + "```java\n".length();
        String example = readme.substring(start, readme.indexOf("```", start)).strip();
        assertEquals(
                example,
                Files.readString(Path.of("src/main/java/example/Operations.java")).strip(),
                "the README's example and Operations.java");
    }

    @Test
    void example_runsOnMemory_andOnZooKeeper() throws Exception {
        Operations.main(new String[] {"memory://operations"});
        try (TestingServer zk = new TestingServer()) {
            Operations.main(new String[] {"zk://" + zk.getConnectString() + "/locks?ttl=10s"});
        }
    }
}
