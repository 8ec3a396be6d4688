package io.distlock.lockctl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.distlock.LockHolder;
import io.distlock.LockState;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * How {@code lockctl locks} shows what a store holds: a table for people (one row per holder, times relative to now)
 * and JSON for scripts (one object per key with its holders, times in ISO-8601 UTC, a value the store does not keep as
 * {@code null}). The shapes are documented in docs/lockctl.md; scripts rely on them.
 */
final class LockStateViews {

    /** The table's header, in column order. */
    static final List<String> COLUMNS =
            List.of("KEY", "KIND", "OWNER", "SINCE", "LEASE ENDS", "FENCING TOKEN", "WAITING");

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final ObjectMapper JSON = new ObjectMapper();

    private LockStateViews() {}

    /**
     * The holders of {@code states} as a table, one row per holder, its key's waiting count on each of its rows; blank
     * where the store keeps no such value. Times are relative to {@code now} ({@code 3m12s ago}, {@code in 12s}).
     */
    static String table(List<LockState> states, Instant now) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(COLUMNS);
        for (LockState state : states) {
            String waiting = count(state.waiting());
            for (LockHolder holder : state.holders()) {
                rows.add(List.of(
                        printable(state.key()),
                        kind(holder),
                        printable(holder.ownerLabel()),
                        holder.since().map(t -> relative(t, now)).orElse(""),
                        holder.leaseEnds().map(t -> relative(t, now)).orElse(""),
                        token(holder.fencingToken()),
                        waiting));
            }
        }
        int[] widths = new int[COLUMNS.size()];
        for (List<String> row : rows) {
            for (int c = 0; c < widths.length; c++) {
                widths[c] = Math.max(widths[c], row.get(c).length());
            }
        }
        StringBuilder table = new StringBuilder();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < widths.length; c++) {
                line.append(String.format("%-" + widths[c] + "s", row.get(c)));
                line.append("  ");
            }
            table.append(line.toString().stripTrailing()).append('\n');
        }
        return table.toString();
    }

    /** The holders of one key as {@link #table(List, Instant)} shows them, relative to now; no waiting count. */
    static String table(String key, List<LockHolder> holders) {
        return table(List.of(new LockState(key, holders, OptionalInt.empty())), Instant.now());
    }

    /**
     * {@code then} relative to {@code now}, to the second: {@code 12s ago}, {@code in 3m05s}, {@code 2h07m ago},
     * {@code in 3d04h}; {@code now} within a second.
     */
    static String relative(Instant then, Instant now) {
        Duration apart = Duration.between(now, then);
        long seconds = Math.abs(apart.getSeconds() + (apart.isNegative() && apart.getNano() > 0 ? 1 : 0));
        if (seconds == 0) {
            return "now";
        }
        String span;
        if (seconds < 60) {
            span = seconds + "s";
        } else if (seconds < 3_600) {
            span = String.format(Locale.ROOT, "%dm%02ds", seconds / 60, seconds % 60);
        } else if (seconds < 86_400) {
            span = String.format(Locale.ROOT, "%dh%02dm", seconds / 3_600, seconds % 3_600 / 60);
        } else {
            span = String.format(Locale.ROOT, "%dd%02dh", seconds / 86_400, seconds % 86_400 / 3_600);
        }
        return apart.isNegative() ? span + " ago" : "in " + span;
    }

    /** One key as JSON: {@code {"key": ..., "holders": [...], "waiting": n or null}}. */
    static ObjectNode json(LockState state) {
        ObjectNode node = NODES.objectNode();
        node.put("key", state.key());
        node.set("holders", holders(state.holders()));
        node.set("waiting", number(state.waiting()));
        return node;
    }

    /** Several keys as a JSON array of {@link #json(LockState)} objects. */
    static ArrayNode json(List<LockState> states) {
        ArrayNode array = NODES.arrayNode();
        states.forEach(state -> array.add(json(state)));
        return array;
    }

    /**
     * What a {@code locks} command did to a key's holders, as JSON: {@code {"key": ..., "broken": [...]}} for {@code
     * break}, {@code {"key": ..., "asked": [...]}} for {@code request-release}.
     */
    static ObjectNode outcome(String key, String field, List<LockHolder> holders) {
        ObjectNode node = NODES.objectNode();
        node.put("key", key);
        node.set(field, holders(holders));
        return node;
    }

    /** {@code node} as indented JSON, ending with a newline. */
    static String print(JsonNode node) {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A tree of plain nodes always prints", e);
        }
    }

    /**
     * One holder as JSON: {@code kind} ({@code lock}, {@code read}, {@code write}, {@code permit}), {@code ownerLabel},
     * {@code ownerId}, {@code since} and {@code leaseEnds} (ISO-8601 UTC to the millisecond, or null), {@code
     * fencingToken} (a number, or null); every field always present.
     */
    private static ArrayNode holders(List<LockHolder> holders) {
        ArrayNode array = NODES.arrayNode();
        for (LockHolder holder : holders) {
            ObjectNode node = array.addObject();
            node.put("kind", kind(holder));
            node.put("ownerLabel", holder.ownerLabel());
            node.put("ownerId", holder.ownerId());
            node.set("since", time(holder.since()));
            node.set("leaseEnds", time(holder.leaseEnds()));
            node.set(
                    "fencingToken",
                    holder.fencingToken().isPresent()
                            ? NODES.numberNode(holder.fencingToken().getAsLong())
                            : NODES.nullNode());
        }
        return array;
    }

    private static JsonNode time(Optional<Instant> time) {
        return time.<JsonNode>map(
                        t -> NODES.textNode(t.truncatedTo(ChronoUnit.MILLIS).toString()))
                .orElse(NODES.nullNode());
    }

    private static JsonNode number(OptionalInt value) {
        return value.isPresent() ? NODES.numberNode(value.getAsInt()) : NODES.nullNode();
    }

    private static String kind(LockHolder holder) {
        return holder.kind().label();
    }

    private static String count(OptionalInt value) {
        return value.isPresent() ? Integer.toString(value.getAsInt()) : "";
    }

    private static String token(OptionalLong value) {
        return value.isPresent() ? Long.toString(value.getAsLong()) : "";
    }

    /** A key or label for the terminal: another tool may have stored control characters, shown as {@code ?}. */
    private static String printable(String text) {
        return text.replaceAll("\\p{Cntrl}", "?");
    }
}
