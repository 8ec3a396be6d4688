package io.distlock.cassandra;

import io.distlock.spi.LeaseLossListener;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * The release requests one grant has heard ({@code RemoteLocker.requestRelease}): a request is a row of {@link
 * CassandraStatements#RELEASE_TABLE} under the grant's partition and owner cell value, named by a random id, that the
 * holder reads at each renewal until its TTL ends. Each id is reported to the grant's loss listener once, however many
 * renewals read it. Shared by a lease and its copy that carries the fencing token.
 */
final class HeardRequests {

    /** Ids kept beyond those the store still shows, at most: requests are rare, and an expired id never comes back. */
    private static final int KEPT = 64;

    private final LeaseLossListener listener;
    private final Set<String> heard = new HashSet<>(); // guarded by this

    HeardRequests(LeaseLossListener listener) {
        this.listener = listener;
    }

    /** The request ids the store holds for the grant now: tells the listener once for each not heard before. */
    void read(Collection<String> requests) {
        int fresh = 0;
        synchronized (this) {
            for (String request : requests) {
                if (heard.add(request)) {
                    fresh++;
                }
            }
            if (heard.size() > KEPT) {
                heard.retainAll(requests);
            }
        }
        for (int i = 0; i < fresh; i++) {
            listener.releaseRequested();
        }
    }
}
