package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.TestPki;
import io.distlock.testing.ZooKeeperEnsemble;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A mutual-TLS locker whose process is killed ({@code kill -9}, no shutdown hook runs) leaves its private key nowhere
 * in the clear under its temporary directory, and the next mutual-TLS locker of the user deletes what is left.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class KilledLockerKeyTest {

    private static final TestPki PKI = SecuredZk.pki("zk-killed-pki");

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().tls(PKI).build();

    @Test
    void killedMutualTlsLocker_leavesNoKeyInTheClear_andTheNextLockerDeletesItsKeyStore() throws Exception {
        TestPki.Identity client = PKI.client(SecuredZk.USER);
        Path tmp = SecuredZk.dir("killed-locker-tmp");
        String uri = "zk://" + ZK.secureConnectString() + "/killed?" + SecuredZk.tlsOptions(PKI);

        Process killed = start(tmp, uri, "hold");
        awaitReady(killed);
        killed.destroyForcibly(); // SIGKILL
        assertThat(killed.waitFor(TestTimeouts.scaled(Duration.ofSeconds(30)).toSeconds(), TimeUnit.SECONDS))
                .isTrue();

        String pem = Files.readString(client.keyFile(), StandardCharsets.US_ASCII);
        byte[] der = Base64.getMimeDecoder()
                .decode(pem.replaceAll("-----[A-Z ]+-----", "").strip());
        for (Path file : files(tmp)) {
            byte[] content = Files.readAllBytes(file);
            assertThat(new String(content, StandardCharsets.ISO_8859_1))
                    .as("%s holds the private key in PEM", file)
                    .doesNotContain(pem.lines().skip(1).findFirst().orElseThrow());
            assertThat(indexOf(content, der))
                    .as("%s holds the private key's bytes", file)
                    .isNegative();
        }

        Process next = start(tmp, uri, "close");
        awaitReady(next);
        assertThat(next.waitFor(TestTimeouts.scaled(Duration.ofSeconds(60)).toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(next.exitValue()).isZero();
        assertThat(files(tmp))
                .as("the killed locker's key store deleted by the next one, the next one's own at its close")
                .filteredOn(f -> f.toString().contains("distlock-zookeeper-tls-"))
                .isEmpty();
    }

    private static Process start(Path tmp, String uri, String then) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Djava.io.tmpdir=" + tmp);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(MutualTlsLocker.class.getName());
        command.add(uri);
        command.add(then);
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static void awaitReady(Process process) throws IOException {
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.equals(MutualTlsLocker.READY)) {
                Thread drain = new Thread(() -> out.lines().forEach(l -> {}), "child-output");
                drain.setDaemon(true);
                drain.start();
                return;
            }
            seen.add(line);
        }
        throw new AssertionError("the locker process ended before it was ready: " + String.join("\n", seen));
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(Files::isRegularFile).toList();
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * The process under test: opens a mutual-TLS locker, takes a lock, says so, then holds or closes. Each mode takes
     * a key of its own: the killed holder's node stays until its session expires, and the next locker is here for the
     * files it finds, not for the killed one's lock.
     */
    static final class MutualTlsLocker {

        static final String READY = "locker-ready";

        public static void main(String[] args) throws Exception {
            RemoteLocker locker = RemoteLockers.builder()
                    .uri(args[0])
                    .connectTimeout(Duration.ofSeconds(60))
                    .build();
            RemoteLock lock = locker.lock("key-of-" + args[1], Duration.ofSeconds(60));
            System.out.println(READY);
            System.out.flush();
            if (args[1].equals("hold")) {
                Thread.sleep(Long.MAX_VALUE);
            }
            lock.release();
            locker.close();
        }
    }
}
