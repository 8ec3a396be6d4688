package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockKind;
import io.distlock.RemoteLocker;
import org.junit.jupiter.api.Test;

/** The partitions and entries of the three spaces read back (no server): what the listing and the look-up decode. */
class SharedEntriesTest {

    @Test
    void keyOf_readsTheKeyBack_fromItsPartitionInEverySpace() {
        for (String key : new String[] {
            "k", "rw#3#abc", "semaphore#1#x", "odd key/é|R", "é".repeat(RemoteLocker.MAX_KEY_BYTES / 2)
        }) {
            for (LockKind kind : new LockKind[] {LockKind.LOCK, LockKind.READ, LockKind.PERMIT}) {
                assertThat(SharedEntries.keyOf(SharedEntries.partition(kind, key)))
                        .as("the key of the %s partition of '%s'", kind, key)
                        .isEqualTo(key);
            }
        }
    }

    @Test
    void kindAndOwnerId_ofAnEntry_dropTheTag() {
        assertThat(SharedEntries.kindOf(LockKind.Space.LOCK, "abc.label")).isEqualTo(LockKind.LOCK);
        assertThat(SharedEntries.ownerIdOf(LockKind.Space.LOCK, "abc.label")).isEqualTo("abc.label");
        assertThat(SharedEntries.kindOf(LockKind.Space.READ_WRITE, "abc.label|W"))
                .isEqualTo(LockKind.WRITE);
        assertThat(SharedEntries.kindOf(LockKind.Space.READ_WRITE, "abc.label|R"))
                .isEqualTo(LockKind.READ);
        assertThat(SharedEntries.ownerIdOf(LockKind.Space.READ_WRITE, "abc.label|R"))
                .isEqualTo("abc.label");
        assertThat(SharedEntries.kindOf(LockKind.Space.SEMAPHORE, "abc.label|P12"))
                .isEqualTo(LockKind.PERMIT);
        assertThat(SharedEntries.ownerIdOf(LockKind.Space.SEMAPHORE, "abc.label|P12"))
                .isEqualTo("abc.label");
    }
}
