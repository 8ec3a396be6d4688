package io.distlock.kit.selftest;

import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import java.util.List;

/**
 * Broken: inspection that reads carelessly. A look-up shows each holder's stored owner id as its label (it does not
 * decode it), the listing shows nothing, and breaking a key reports its holders without deleting anything.
 */
public final class CarelessInspectionProvider extends BrokenProvider {

    /** For the service loader. */
    public CarelessInspectionProvider() {
        super("broken-inspection");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public LockState inspect(String key) {
                LockState state = correct.inspect(key);
                return new LockState(
                        key,
                        state.holders().stream()
                                .map(h -> new LockHolder(
                                        h.kind(), h.ownerId(), h.ownerId(), h.since(), h.leaseEnds(), h.fencingToken()))
                                .toList(),
                        state.waiting());
            }

            @Override
            public List<LockState> listHeld() {
                return List.of();
            }

            @Override
            public List<LockHolder> breakLock(String key) {
                return correct.inspect(key).holders();
            }
        };
    }
}
