package io.distlock.lockctl;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.spi.Redaction;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Seed 000's two-ATM story: one account, several ATMs withdrawing from it at once, each reading the balance,
 * deciding, then writing it back. Under the lock no withdrawal is lost and the balance never goes below zero; with
 * {@code --no-lock} the race shows.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Seed 000's ATM story: ATMs withdraw from one account at once, with or without a lock.",
            "Under the lock the balance never goes below zero; with --no-lock the race shows."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl demo                                  # on an embedded ZooKeeper",
            "  lockctl demo --no-lock                        # the race the lock prevents",
            "  lockctl demo --store redis://127.0.0.1:6379 --atms 5 --withdrawals 10"
        })
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(
            names = {"--store", "--uri"},
            paramLabel = "URI",
            description = "Lock store URI (default: $DISTLOCK_STORE if set, else an embedded ZooKeeper).")
    String store;

    @Option(names = "--atms", defaultValue = "2", description = "ATMs withdrawing at once (default: ${DEFAULT-VALUE}).")
    int atms;

    @Option(
            names = "--withdrawals",
            defaultValue = "5",
            description = "Withdrawals each ATM attempts (default: ${DEFAULT-VALUE}).")
    int withdrawals;

    @Option(names = "--balance", defaultValue = "200", description = "Opening balance (default: ${DEFAULT-VALUE}).")
    int openingBalance;

    @Option(names = "--amount", defaultValue = "150", description = "Each withdrawal (default: ${DEFAULT-VALUE}).")
    int amount;

    @Option(
            names = "--think",
            defaultValue = "20ms",
            description = "Time an ATM spends between reading and writing the balance (default: ${DEFAULT-VALUE}).",
            converter = DurationConverter.class)
    Duration think;

    @Option(names = "--no-lock", description = "Withdraw without taking the lock, to show the race.")
    boolean noLock;

    /** The account: a plain field read and written without any synchronisation, like a row in a database. */
    private int balance;

    private final List<String> history = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (atms < 1 || withdrawals < 1 || amount < 1 || openingBalance < 0) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--atms, --withdrawals and --amount must be positive, --balance not negative");
        }
        PrintWriter out = spec.commandLine().getOut();
        String chosen = DefaultStore.chosen(store, LockCtl.env(spec));
        try (DefaultStore defaults = DefaultStore.unless(chosen, "demo")) {
            return demo(out, defaults.uri(chosen));
        }
    }

    private int demo(PrintWriter out, String uri) throws Exception {
        balance = openingBalance;
        out.printf(
                "Account opens with %d; %d ATMs try %d withdrawals of %d each, %s.%n",
                openingBalance,
                atms,
                withdrawals,
                amount,
                noLock ? "WITHOUT a lock" : "each under the lock on " + Redaction.uri(uri));
        int succeeded;
        try (RemoteLocker locker = RemoteLockers.open(uri)) {
            succeeded = runAtms(locker);
        }
        history.forEach(out::println);
        int expected = openingBalance - succeeded * amount;
        out.printf(
                "Withdrawals granted: %d, paid out: %d, final balance: %d (opening %d - paid out = %d)%n",
                succeeded, succeeded * amount, balance, openingBalance, expected);
        if (expected < 0 || balance != expected) {
            out.printf(
                    "RACE: ATMs read the same balance and each paid out: %d paid from an account that held %d%s."
                            + " This is what the lock prevents.%n",
                    succeeded * amount,
                    openingBalance,
                    balance != expected ? ", and the ledger lost a withdrawal" : "");
        } else {
            out.println("OK: the balance never went below zero and no withdrawal was lost.");
        }
        return 0;
    }

    private int runAtms(RemoteLocker locker) throws InterruptedException, ExecutionException {
        ExecutorService pool = Executors.newFixedThreadPool(atms);
        CyclicBarrier start = new CyclicBarrier(atms);
        CountDownLatch ready = new CountDownLatch(atms);
        List<Future<Integer>> results = new ArrayList<>();
        for (int i = 1; i <= atms; i++) {
            String atm = "ATM-" + i;
            results.add(pool.submit(() -> {
                ready.countDown();
                int granted = 0;
                for (int n = 0; n < withdrawals; n++) {
                    start.await(); // every round, all ATMs go at once
                    granted += noLock ? withdraw(atm, "no lock") : withdrawUnderLock(locker, atm);
                }
                return granted;
            }));
        }
        ready.await();
        int total = 0;
        for (Future<Integer> f : results) {
            total += f.get();
        }
        pool.shutdown();
        return total;
    }

    private int withdrawUnderLock(RemoteLocker locker, String atm) throws InterruptedException {
        try (RemoteLock lock = locker.lock("account:42", Duration.ofSeconds(30))) {
            String token = lock.fencingToken().isPresent()
                    ? "token " + lock.fencingToken().getAsLong()
                    : "no token";
            return withdraw(atm, token);
        }
    }

    private int withdraw(String atm, String how) throws InterruptedException {
        int read = balance;
        Thread.sleep(think.toMillis());
        if (read < amount) {
            record(atm, how, read, "declined", read);
            return 0;
        }
        balance = read - amount;
        record(atm, how, read, "paid " + amount, read - amount);
        return 1;
    }

    private void record(String atm, String how, int read, String what, int wrote) {
        synchronized (history) {
            history.add(String.format("  %-6s %-9s read %5d  %-9s wrote %5d", atm, "(" + how + ")", read, what, wrote));
        }
    }
}
