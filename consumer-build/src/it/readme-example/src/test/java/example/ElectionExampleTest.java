package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** The README's election example, built as a user builds it, run on memory: and on ZooKeeper. */
class ElectionExampleTest {

    /** The first Java block of the README's section {@code heading}. */
    private static String readmeExample(String heading) throws Exception {
        String doc = Files.readString(Path.of(System.getProperty("readme")));
        int section = doc.indexOf("\n" + heading + "\n");
        if (section < 0) {
            throw new AssertionError("no section '" + heading + "' in the README");
        }
        int start = doc.indexOf("```java\n", section) + "```java\n".length();
        return doc.substring(start, doc.indexOf("```", start)).strip();
    }

    @Test
    void electionExample_isThisFile_asPasted() throws Exception {
        assertEquals(
                readmeExample("## Leader election"),
                Files.readString(Path.of("src/main/java/example/Leaders.java")).strip(),
                "the README's example and Leaders.java");
    }

    @Test
    void electionExample_runsOnMemory() throws Exception {
        Leaders.main(new String[] {"memory://elections"});
    }

    @Test
    void electionExample_runsOnZooKeeper() throws Exception {
        try (TestingServer zk = new TestingServer()) {
            Leaders.main(new String[] {"zk://" + zk.getConnectString() + "/locks?ttl=10s"});
        }
    }
}
