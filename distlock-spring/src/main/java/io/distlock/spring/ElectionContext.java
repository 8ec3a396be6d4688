package io.distlock.spring;

import io.distlock.Term;
import java.util.Optional;
import java.util.OptionalLong;
import org.springframework.integration.leader.Context;

/**
 * Spring Integration's leadership {@link Context} of a {@link DistlockLeaderInitiator}, with the distlock {@link Term}
 * behind it, so that a leader can fence its writes with the term's {@linkplain #epoch() epoch}.
 *
 * <p>The context handed to {@code Candidate.onGranted}, {@code onRevoked} and in the {@code OnGrantedEvent} and {@code
 * OnRevokedEvent} is bound to one term: {@link #term()} is that term also after it ended, {@link #isLeader()} says
 * whether it is still current, and {@link #yield()} steps down only while it is. The initiator's own {@link
 * DistlockLeaderInitiator#getContext()} follows the candidate instead: its term is the current one, if any.
 */
public interface ElectionContext extends Context {

    /**
     * Whether the term this context speaks of is current: its lock held and the term not ended ({@link
     * Term#isCurrent()}). Asks the store nothing.
     */
    @Override
    boolean isLeader();

    /** The election's name, which is the role of Spring's leadership events. */
    @Override
    String getRole();

    /**
     * Steps down if this context's term is current and queues again, as Spring's initiators do: the election's lock is
     * released (another candidate already waiting is granted at once) and {@code onRevoked} follows. Does nothing when
     * the term is not current. Blocks for the release's round trip to the store.
     */
    @Override
    void yield();

    /**
     * The term this context speaks of: for a context given with a grant or a revocation, that term (also once it
     * ended); for {@link DistlockLeaderInitiator#getContext()}, the candidate's current term, empty while it does not
     * lead.
     */
    Optional<Term> term();

    /**
     * The term's epoch ({@link Term#epoch()}): strictly greater than every earlier term's, to hand to the resources the
     * leader writes so that they refuse a deposed leader's late writes. Empty without a term, or where the backend gives
     * no fencing token (Redis).
     */
    default OptionalLong epoch() {
        return term().map(Term::epoch).orElse(OptionalLong.empty());
    }
}
