package io.distlock.cassandra;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The clustering values of one backend's owner cells. An owner cell's clustering column is not the owner id (unique
 * per acquisition, so each release would leave one more tombstone in the owner row for every later read to step over)
 * but a <em>slot</em>: this backend's random id and the lowest index none of its attempts on the key uses now. Slots
 * are reused, so the owner row of a key holds at most one row, live or deleted, per slot ever used: the backends that
 * used the key times their most concurrent attempts on it.
 *
 * <p>Lemma 1 needs only that two concurrent claimers write different cells and that each then reads every live cell:
 * attempts in flight at the same time hold different slots (different backends have different ids; one backend never
 * hands out a slot twice before it is freed), and the owner row is still read whole. A slot is freed once its attempt
 * deleted its cell (withdrawn) or its lease was released; a later write to the slot by the same backend carries a
 * later write timestamp (the driver's timestamps are monotonic per session), so it is never shadowed by the earlier
 * delete.
 */
final class OwnerSlots {

    private final String id = UUID.randomUUID().toString().substring(0, 13);
    private final Map<String, BitSet> used = new HashMap<>();

    /** Takes the lowest free slot of {@code key}. */
    synchronized String take(String key) {
        BitSet slots = used.computeIfAbsent(key, k -> new BitSet());
        int index = slots.nextClearBit(0);
        slots.set(index);
        return id + "/" + index;
    }

    /** Frees {@code slot} of {@code key} (taken by {@link #take}); its cell must be deleted or about to expire. */
    synchronized void free(String key, String slot) {
        BitSet slots = used.get(key);
        if (slots == null || !slot.startsWith(id + "/")) {
            return;
        }
        slots.clear(Integer.parseInt(slot.substring(id.length() + 1)));
        if (slots.isEmpty()) {
            used.remove(key);
        }
    }
}
