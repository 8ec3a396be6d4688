package io.distlock.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The masters' votes on one command sent to all of them, counted as they arrive. With {@code early}, the tally is
 * decided as soon as a majority said yes (the votes still pending then show as {@code null}); otherwise, and for
 * every failure, when all have answered or timed out: a failure's kind depends on every vote.
 */
final class Tally {

    private final Vote[] votes;
    private final int majority;
    private int yes;
    private int no;
    private int failed;

    private Tally(int n, int majority) {
        this.votes = new Vote[n];
        this.majority = majority;
    }

    /** Counts {@code pending} (one per master, in the masters' order); completes with a snapshot once decided. */
    static CompletableFuture<Tally> count(List<CompletableFuture<Vote>> pending, int majority, boolean early) {
        Tally live = new Tally(pending.size(), majority);
        CompletableFuture<Tally> decided = new CompletableFuture<>();
        for (int i = 0; i < pending.size(); i++) {
            int index = i;
            pending.get(i).whenComplete((vote, error) -> {
                Tally snapshot = live.add(index, error != null ? Vote.FAILED : vote, early);
                if (snapshot != null) {
                    decided.complete(snapshot);
                }
            });
        }
        return decided;
    }

    /** Records a vote; returns a snapshot when this vote decides the tally, else null. */
    private synchronized Tally add(int index, Vote vote, boolean early) {
        boolean wasDecided = isDecided(early);
        votes[index] = vote;
        switch (vote) {
            case YES -> yes++;
            case NO -> no++;
            case FAILED -> failed++;
        }
        if (wasDecided || !isDecided(early)) {
            return null;
        }
        // every master has voted: nothing changes this tally any more, so it is its own snapshot
        return yes + no + failed == votes.length ? this : copy();
    }

    private boolean isDecided(boolean early) {
        int answered = yes + no + failed;
        if (answered == votes.length) {
            return true;
        }
        return early && yes >= majority;
    }

    private Tally copy() {
        Tally t = new Tally(votes.length, majority);
        System.arraycopy(votes, 0, t.votes, 0, votes.length);
        t.yes = yes;
        t.no = no;
        t.failed = failed;
        return t;
    }

    int yes() {
        return yes;
    }

    int no() {
        return no;
    }

    int failed() {
        return failed;
    }

    /** Votes not yet in when the tally was decided. */
    int pending() {
        return votes.length - yes - no - failed;
    }

    boolean hasMajority() {
        return yes >= majority;
    }

    /** The vote of master {@code index}; null if it was still pending. */
    Vote vote(int index) {
        return votes[index];
    }

    @Override
    public String toString() {
        return yes + " yes, " + no + " no, " + failed + " failed" + (pending() > 0 ? ", " + pending() + " pending" : "")
                + " (majority " + majority + " of " + votes.length + ")";
    }
}
