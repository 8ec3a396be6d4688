package io.distlock.cassandra;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Keeps a lease's renewal from undoing its release. A renewal reads the owner cell, then rewrites
 * the cells with a fresh TTL; a rewrite sent after the release's deletes carries a later write timestamp and brings the
 * cells back for a whole TTL. So a rewrite is sent only while the lease is not released, and the release waits until
 * a rewrite in flight has answered before it sends its deletes: they are then stamped after the rewrite (the
 * session's write timestamps are monotonic, and an answered request is not sent again), so they win wherever it lands.
 * Shared by the copies of one lease.
 */
final class RewriteFence {

    private boolean released;
    private CompletableFuture<?> inFlight = CompletableFuture.completedFuture(null);

    /** Sends a rewrite through {@code send} unless the lease was released; empty when it was. */
    synchronized Optional<CompletionStage<Void>> sendUnlessReleased(Supplier<CompletionStage<Void>> send) {
        if (released) {
            return Optional.empty();
        }
        CompletionStage<Void> sent = send.get();
        inFlight = sent.toCompletableFuture();
        return Optional.of(sent);
    }

    /** Refuses every later rewrite; completes (never exceptionally) once the rewrite in flight, if any, has answered. */
    synchronized CompletionStage<Void> release() {
        released = true;
        return inFlight.handle((v, error) -> null);
    }
}
