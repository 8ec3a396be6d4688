package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.toolkit.OwnerIds;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code lockctl locks list/show/request-release/break} and {@code lockctl run --owner} on the in-JVM store, where lockers of this JVM
 * on one {@code memory://space} see each other: the table and the JSON, a free key, the question before breaking and
 * the refusal without a terminal, bad input. Across processes on ZooKeeper: {@link LocksOnZooKeeperTest}.
 */
class LocksCommandTest {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(10));
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String store = "memory://locks-" + UUID.randomUUID();

    @TempDir
    Path dir;

    @Test
    void list_showsEveryHolderOfEveryKey_asATableAndAsJson() throws Exception {
        try (RemoteLocker billing = RemoteLockers.builder()
                        .uri(store)
                        .ownerLabel("billing on host-a")
                        .build();
                RemoteLocker other = RemoteLockers.open(store);
                RemoteLock lock = billing.lock("invoices");
                RemoteLock read = other.readWriteLock("catalog").readLock().lock()) {
            CompletableFuture<RemoteLock> waiter = other.lockAsync("invoices", WAIT);

            Cli table = Cli.run("locks", "list", "--store", store);
            Cli json = Cli.run("locks", "list", "--store", store, "--json");

            assertThat(table.exitCode()).as(table.err()).isZero();
            List<String> lines = table.out().lines().toList();
            assertThat(lines.get(0).split("\\s{2,}"))
                    .containsExactly("KEY", "KIND", "OWNER", "SINCE", "LEASE ENDS", "FENCING TOKEN", "WAITING");
            assertThat(lines).hasSize(3);
            assertThat(row(lines.get(1)))
                    .containsExactly(
                            "catalog",
                            "read",
                            OwnerIds.defaultLabel(),
                            "TIME AGO",
                            "IN TIME",
                            Long.toString(read.fencingToken().getAsLong()),
                            "0");
            assertThat(row(lines.get(2)))
                    .containsExactly(
                            "invoices",
                            "lock",
                            "billing on host-a",
                            "TIME AGO",
                            "IN TIME",
                            Long.toString(lock.fencingToken().getAsLong()),
                            "1");

            assertThat(json.exitCode()).as(json.err()).isZero();
            JsonNode keys = JSON.readTree(json.out());
            assertThat(keys.isArray()).isTrue();
            assertThat(keys).hasSize(2);
            JsonNode invoices = keys.get(1);
            assertThat(invoices.get("key").asText()).isEqualTo("invoices");
            assertThat(invoices.get("waiting").asInt()).isEqualTo(1);
            JsonNode holder = invoices.get("holders").get(0);
            assertThat(holder.get("kind").asText()).isEqualTo("lock");
            assertThat(holder.get("ownerLabel").asText()).isEqualTo("billing on host-a");
            assertThat(holder.get("ownerId").asText()).isEqualTo(lock.ownerId());
            assertThat(holder.get("fencingToken").asLong())
                    .isEqualTo(lock.fencingToken().getAsLong());
            assertThat(Instant.parse(holder.get("since").asText())).isBefore(Instant.now());
            assertThat(Instant.parse(holder.get("leaseEnds").asText())).isAfter(Instant.now());
            waiter.cancel(false);
        }
    }

    @Test
    void table_leavesBlank_andJsonGivesNull_whatTheStoreDoesNotKeep() throws Exception {
        Instant now = Instant.parse("2026-12-02T15:00:00Z");
        LockHolder bare = LockHolder.of(
                LockKind.PERMIT, OwnerIds.next("redis job"), Optional.empty(), Optional.empty(), OptionalLong.empty());
        LockHolder full = LockHolder.of(
                LockKind.WRITE,
                OwnerIds.next("etcd job"),
                Optional.of(now.minusSeconds(192)),
                Optional.of(now.plusMillis(12_400)),
                OptionalLong.of(41));
        List<LockState> states = List.of(
                new LockState("jobs", List.of(bare), OptionalInt.empty()),
                new LockState("catalog", List.of(full), OptionalInt.of(3)));

        List<String> lines = LockStateViews.table(states, now).lines().toList();
        JsonNode json = JSON.readTree(LockStateViews.print(LockStateViews.json(states)));

        int since = lines.get(0).indexOf("SINCE");
        assertThat(lines.get(1).split("\\s{2,}")).containsExactly("jobs", "permit", "redis job");
        assertThat(lines.get(1)).hasSize(lines.get(0).indexOf("OWNER") + "redis job".length());
        assertThat(lines.get(2).substring(since).split("\\s{2,}")).containsExactly("3m12s ago", "in 12s", "41", "3");
        JsonNode holder = json.get(0).get("holders").get(0);
        assertThat(json.get(0).get("waiting").isNull()).isTrue();
        for (String field : List.of("since", "leaseEnds", "fencingToken")) {
            assertThat(holder.get(field)).as(field).isNotNull();
            assertThat(holder.get(field).isNull()).as(field).isTrue();
        }
        assertThat(json.get(1).get("holders").get(0).get("since").asText()).isEqualTo("2026-12-02T14:56:48Z");
        assertThat(json.get(1).get("holders").get(0).get("leaseEnds").asText()).isEqualTo("2026-12-02T15:00:12.400Z");
        assertThat(LockStateViews.relative(now.plusSeconds(7_500), now)).isEqualTo("in 2h05m");
        assertThat(LockStateViews.relative(now.minusSeconds(90_000), now)).isEqualTo("1d01h ago");
        assertThat(LockStateViews.relative(now.minusMillis(900), now)).isEqualTo("now");
    }

    @Test
    void show_aFreeKey_saysItIsFree_andExits0() throws Exception {
        Cli text = Cli.run("locks", "show", "--store", store, "nobody-holds-this");
        Cli json = Cli.run("locks", "show", "--store", store, "--json", "nobody-holds-this");

        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).isEqualTo("'nobody-holds-this' is free.\n");
        assertThat(json.exitCode()).as(json.err()).isZero();
        assertThat(JSON.readTree(json.out()))
                .isEqualTo(JSON.readTree("{\"key\":\"nobody-holds-this\",\"holders\":[],\"waiting\":0}"));
    }

    @Test
    void break_withYes_deletesTheHolders_printsThem_andTheNextWaiterIsGranted() throws Exception {
        try (RemoteLocker stuck = RemoteLockers.builder()
                        .uri(store)
                        .ownerLabel("stuck job")
                        .build();
                RemoteLocker next = RemoteLockers.open(store)) {
            RemoteLock lock = stuck.lock("k");
            CompletableFuture<RemoteLock> waiter = next.lockAsync("k", WAIT);

            Cli cli = Cli.run("locks", "break", "--store", store, "--yes", "k");

            assertThat(cli.exitCode()).as(cli.err()).isZero();
            assertThat(cli.out()).startsWith("Broke 'k': deleted the entries of\n");
            assertThat(cli.out())
                    .contains("stuck job")
                    .contains(Long.toString(lock.fencingToken().getAsLong()));
            waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).close();
            Cli again = Cli.run("locks", "break", "--store", store, "--yes", "--json", "k");
            assertThat(JSON.readTree(again.out())).isEqualTo(JSON.readTree("{\"key\":\"k\",\"broken\":[]}"));
        }
    }

    @Test
    void requestRelease_onAHeldKey_asksItsHolders_printsThem_andDeletesNothing() throws Exception {
        try (RemoteLocker holder = RemoteLockers.builder()
                        .uri(store)
                        .ownerLabel("reindex on host-b")
                        .build();
                RemoteLock lock = holder.lock("catalog")) {
            BlockingQueue<RemoteLock> asked = new LinkedBlockingQueue<>();
            lock.onReleaseRequested(asked::add);

            Cli table = Cli.run("locks", "request-release", "--store", store, "catalog");

            assertThat(table.exitCode()).as(table.err()).isZero();
            assertThat(table.out()).startsWith("Asked the holders of 'catalog' to let go (each decides whether to):\n");
            assertThat(table.out())
                    .contains("reindex on host-b")
                    .contains(Long.toString(lock.fencingToken().getAsLong()));
            assertThat(asked.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("the holder's listener ran")
                    .isSameAs(lock);

            Cli json = Cli.run("locks", "request-release", "--store", store, "--json", "catalog");

            assertThat(json.exitCode()).as(json.err()).isZero();
            JsonNode answer = JSON.readTree(json.out());
            assertThat(answer.get("key").asText()).isEqualTo("catalog");
            assertThat(answer.get("asked")).hasSize(1);
            assertThat(answer.get("asked").get(0).get("ownerId").asText()).isEqualTo(lock.ownerId());
            assertThat(asked.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isSameAs(lock);
            assertThat(lock.isHeld())
                    .as("the holder decides; this one did not let go")
                    .isTrue();
            assertThat(holder.inspect("catalog").held()).isTrue();
        }
    }

    @Test
    void requestRelease_aFreeKey_saysThereIsNothingToAsk_andExits0() throws Exception {
        Cli text = Cli.run("locks", "request-release", "--store", store, "nobody-holds-this");
        Cli json = Cli.run("locks", "request-release", "--store", store, "--json", "nobody-holds-this");

        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).isEqualTo("'nobody-holds-this' is free: nothing to ask.\n");
        assertThat(json.exitCode()).as(json.err()).isZero();
        assertThat(JSON.readTree(json.out())).isEqualTo(JSON.readTree("{\"key\":\"nobody-holds-this\",\"asked\":[]}"));
    }

    @Test
    void break_atATerminal_showsTheHolders_andBreaksOnlyWhenTheAnswerIsYes() throws Exception {
        try (RemoteLocker stuck =
                RemoteLockers.builder().uri(store).ownerLabel("stuck job").build()) {
            RemoteLock lock = stuck.lock("k");
            List<String> asked = new ArrayList<>();

            Cli no = Cli.runAt(question -> record(asked, question, "n"), "locks", "break", "--store", store, "k");
            assertThat(no.exitCode()).isEqualTo(ExitCodes.FAILED);
            assertThat(no.err()).contains("stuck job").contains("lockctl: 'k' not broken");
            assertThat(asked).containsExactly("Break 'k', deleting the holder above? [y/N] ");
            assertThat(lock.isHeld()).isTrue();

            Cli yes = Cli.runAt(question -> record(asked, question, " Y"), "locks", "break", "--store", store, "k");
            assertThat(yes.exitCode()).as(yes.err()).isZero();
            assertThat(yes.out()).contains("stuck job");
            assertThat(asked).hasSize(2);

            Cli free = Cli.runAt(question -> record(asked, question, "y"), "locks", "break", "--store", store, "k");
            assertThat(free.exitCode()).as(free.err()).isZero();
            assertThat(free.out()).isEqualTo("'k' was free: nothing broken.\n");
            assertThat(asked).as("nothing to ask about a free key").hasSize(2);
        }
    }

    @Test
    void break_withoutATerminal_andWithoutYes_refusesInOneLine_andDeletesNothing() throws Exception {
        try (RemoteLocker holder = RemoteLockers.open(store);
                RemoteLock lock = holder.lock("k")) {
            Cli cli = Cli.run("locks", "break", "--store", store, "k");

            assertThat(cli.exitCode()).isEqualTo(ExitCodes.USAGE);
            assertThat(cli.err()).isEqualTo("lockctl: " + String.format(LocksBreakCommand.NO_TERMINAL, "k") + "\n");
            assertThat(cli.out()).isEmpty();
            assertThat(holder.inspect("k").held()).isTrue();
        }
    }

    @Test
    void badInput_exits2_inOneLine() {
        for (String[] args : new String[][] {
            {"locks", "show", "--store", store, " "},
            {"locks", "break", "--store", store, "--yes", ""},
            {"locks", "show", " "},
            {"locks", "list", "--store", "zoo://h/x"},
            {"locks", "show", "--store", "uninspectable://x", "k"},
            {"locks", "list", "--store", "uninspectable://x"},
            {"locks", "break", "--store", "uninspectable://x", "--yes", "k"},
            {"locks", "request-release", "--store", "uninspectable://x", "k"},
            {"locks", "request-release", "--store", store, " "},
            {"locks"},
        }) {
            Cli cli = Cli.run(args);

            assertThat(cli.exitCode())
                    .as(String.join(" ", args) + ": " + cli.err())
                    .isEqualTo(ExitCodes.USAGE);
            assertThat(cli.err().lines().findFirst().orElse("")).startsWith("lockctl: ");
            assertThat(cli.out()).isEmpty();
        }
        assertThat(Cli.run("locks", "show", " ").err()).contains("KEY must not be blank");
        assertThat(Cli.run("locks", "list", "--store", "zoo://h/x").err()).contains("Unknown lock URI scheme 'zoo'");
        assertThat(Cli.run("locks", "list", "--store", "uninspectable://x").err())
                .contains("offers no inspection (it offers [])");
        assertThat(Cli.run("locks", "break", "--store", "uninspectable://x", "--yes", "k")
                        .err())
                .contains("offers no breaking a lock (it offers [])");
        assertThat(Cli.run("locks", "request-release", "--store", "uninspectable://x", "k")
                        .err())
                .contains("offers no asking a holder to let go (it offers [])");
    }

    @Test
    void locks_onTheEmbeddedDefault_sayOnStderrThatThereIsNothingToShow() throws Exception {
        Cli list = Cli.run("locks", "list");
        Cli show = Cli.run("locks", "show", "--json", "k");

        assertThat(list.exitCode()).as(list.err()).isZero();
        assertThat(list.err().strip()).isEqualTo(LocksStore.PRIVATE_STORE);
        assertThat(list.out()).isEqualTo("No key is held.\n");
        assertThat(show.exitCode()).as(show.err()).isZero();
        assertThat(JSON.readTree(show.out()).get("holders")).isEmpty();
        Cli fromEnv = Cli.run(Map.of(DefaultStore.VARIABLE, store), "locks", "list", "--json");
        assertThat(fromEnv.err()).isEmpty();
        assertThat(fromEnv.out().strip()).isEqualTo("[ ]");
    }

    @Test
    void help_summarisesEachCommandInOneSentence_andGivesExamplesTimesAndExitCodes() {
        Cli root = Cli.run("--help");
        Cli locks = Cli.run("locks", "--help");

        assertThat(root.out())
                .containsPattern("locks\\s+Shows who holds a store's keys; asks their holders to let go, or breaks a"
                        + "\\s+stuck holder's lock.\\n");
        assertThat(locks.out())
                .containsPattern("list\\s+Lists every held key of the store with its holders.\\n")
                .containsPattern("show\\s+Shows who holds KEY and how many wait.\\n")
                .containsPattern("request-release\\s+Asks KEY's holders to let go; each holder decides.\\n")
                .containsPattern("break\\s+Breaks KEY: deletes its holders' entries, after asking.\\n")
                .contains("relative to now ('3m12s ago', 'in 12s'); --json gives ISO-8601 UTC")
                .contains("lockctl locks break nightly-backup --yes")
                .contains("lockctl locks request-release nightly-backup")
                .contains("locks break: not confirmed");
    }

    /**
     * Every command's help, down the whole tree, renders its text as written: picocli reads descriptions as format
     * strings, and a lone {@code %} made it warn on stderr and print the raw text instead.
     */
    @Test
    void everyCommandsHelp_rendersWithoutAFormatWarning() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        StringWriter usage = new StringWriter();
        System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
        try {
            renderEveryHelp(LockCtl.commandLine(new PrintWriter(usage), new PrintWriter(usage)), usage);
        } finally {
            System.setErr(stderr);
        }
        assertThat(warnings.toString(StandardCharsets.UTF_8))
                .as("what picocli printed on stderr while rendering every command's help")
                .isEmpty();
        assertThat(usage.toString().replaceAll("\\s+", " ")).contains("(default: 0.9, 90 % reads)");
    }

    private static void renderEveryHelp(CommandLine command, StringWriter usage) {
        usage.write(command.getUsageMessage());
        command.getSubcommands().values().forEach(sub -> renderEveryHelp(sub, usage));
    }

    @Test
    void runOwner_isTheLabelInTheOwnerId_andABadOneExits2WithTheBuildersMessage() throws Exception {
        Path seen = dir.resolve("owner");
        Cli run = Cli.run(
                "run",
                "--store",
                store,
                "--owner",
                "nightly backup on db-7",
                "--key",
                "k",
                "--",
                "sh",
                "-c",
                "echo \"$DISTLOCK_OWNER_ID\" > " + seen);
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(OwnerIds.label(Files.readString(seen).strip())).hasValue("nightly backup on db-7");

        for (String bad : List.of(" ", "a\tb")) {
            Cli refused = Cli.run("run", "--store", store, "--owner", bad, "--key", "k", "--", "true");
            assertThat(refused.exitCode()).as(refused.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(refused.err().strip().lines()).hasSize(1);
            assertThat(refused.err()).contains("ownerLabel");
        }
    }

    /** A row's cells, the since and lease-end times as {@code TIME AGO} and {@code IN TIME} where they are such. */
    private static List<String> row(String line) {
        return java.util.Arrays.stream(line.split("\\s{2,}"))
                .map(cell -> cell.matches("now|\\d+s ago") ? "TIME AGO" : cell.matches("in 2\\ds") ? "IN TIME" : cell)
                .toList();
    }

    private static String record(List<String> asked, String question, String answer) {
        asked.add(question);
        return answer;
    }
}
