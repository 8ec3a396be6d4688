package io.distlock.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Tells, once opening has waited {@code connectTimeout} in vain, whether the members it reaches have a leader: a
 * cluster that has lost its quorum answers nothing it is asked to write, so its members look unreachable to a
 * client, though each still answers a status request at once ({@code leader} 0, "etcdserver: no leader"). Asks
 * every endpoint at once, each on its own channel, for at most a short budget.
 */
final class MemberStatus {

    /** The most opening keeps of its {@code connectTimeout} for asking the members. */
    static final long BUDGET_MILLIS = 500;

    private MemberStatus() {}

    /**
     * A sentence naming the members without a leader, if every member that answered within {@code budgetMillis} has
     * none (and one did); empty otherwise, when the wait had another cause.
     */
    static Optional<String> noLeader(Client client, EtcdLocation location, long budgetMillis) {
        List<String> endpoints = location.endpoints();
        List<CompletableFuture<StatusResponse>> asked = new ArrayList<>();
        for (String endpoint : endpoints) {
            asked.add(client.getMaintenanceClient().statusMember(endpoint));
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMillis);
        List<String> leaderless = new ArrayList<>();
        List<String> silent = new ArrayList<>();
        for (int i = 0; i < endpoints.size(); i++) {
            CompletableFuture<StatusResponse> status = asked.get(i);
            try {
                StatusResponse answer = status.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (answer.getLeader() != 0) {
                    return Optional.empty(); // a member with a leader: the wait was something else
                }
                leaderless.add(endpoints.get(i)
                        + (answer.getErrorList().isEmpty()
                                ? ""
                                : " (" + String.join(", ", answer.getErrorList()) + ")"));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            } catch (Exception e) {
                status.cancel(true);
                silent.add(endpoints.get(i));
            }
        }
        if (leaderless.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("the cluster has no leader, so it takes no write: it has lost its quorum (more than half of"
                + " its members down or cut off) or is electing one; " + String.join(", ", leaderless)
                + " answered without a leader"
                + (silent.isEmpty()
                        ? ""
                        : ", " + String.join(", ", silent) + " did not answer within " + budgetMillis + " ms"));
    }
}
