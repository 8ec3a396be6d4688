package io.distlock.toolkit;

import io.distlock.spi.LeaseLossListener;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * The release requests one grant has heard ({@link io.distlock.RemoteLocker#requestRelease}), for a backend whose holder
 * reads requests named by ids (a cell read at each renewal, on one store node or several): each id is reported to the
 * grant's {@link LeaseLossListener#releaseRequested()} once, however many reads see it. Thread-safe.
 */
public final class HeardRequests {

    /** Ids remembered at most: requests are rare, and the oldest ids not read again are forgotten first. */
    static final int REMEMBERED = 64;

    private final LeaseLossListener listener;
    /** Guarded by this; made at the first read, so that a grant that hears nothing (most) allocates no set. */
    private Set<String> heard;

    /** @param listener told once per request: the {@link io.distlock.spi.LockRequest#lossListener()} of the grant */
    public HeardRequests(LeaseLossListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /**
     * The request ids one read found for the grant: tells the listener once for each not heard before (blank ids are
     * skipped). Beyond {@value #REMEMBERED} ids, forgets the oldest of those this read did not see.
     */
    public void read(Collection<String> ids) {
        int fresh = 0;
        synchronized (this) {
            if (heard == null) {
                heard = new LinkedHashSet<>();
            }
            for (String id : ids) {
                if (!id.isBlank() && heard.add(id)) {
                    fresh++;
                }
            }
            for (Iterator<String> oldest = heard.iterator(); heard.size() > REMEMBERED && oldest.hasNext(); ) {
                if (!ids.contains(oldest.next())) {
                    oldest.remove();
                }
            }
        }
        for (int i = 0; i < fresh; i++) {
            listener.releaseRequested();
        }
    }
}
