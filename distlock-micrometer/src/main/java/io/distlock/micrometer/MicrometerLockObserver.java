package io.distlock.micrometer;

import io.distlock.LockKind;
import io.distlock.LockObserver;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Records what a locker's locks do as Micrometer meters and, optionally, observations (so that a tracing bridge turns
 * acquisitions into spans). Works with every backend. Give the same observer to every locker that reports into one
 * registry (the {@value #HELD} gauge is the observer's own):
 *
 * <pre>{@code
 * RemoteLocker locker = RemoteLockers.builder()
 *         .uri("etcd://e1:2379/locks")
 *         .observer(MicrometerLockObserver.builder(meterRegistry).observations(observationRegistry).build())
 *         .build();
 * }</pre>
 *
 * <p>The meters, each tagged {@code store} with the URI's scheme, and those of a grant also {@value #PRIMITIVE} with
 * what is granted ({@link LockKind#label()}: {@code lock}, {@code read}, {@code write}, {@code permit}; the lock, a side
 * of a read-write lock, a semaphore's permit):
 *
 * <ul>
 *   <li>{@value #ACQUIRE} (timer): the wait of each acquisition, tagged {@value #PRIMITIVE}, {@code kind} (how it was
 *       asked for: {@code lock}, {@code try_lock}) and {@code outcome} ({@code granted}, {@code busy}, {@code
 *       timed_out}, {@code failed}, {@code interrupted}, {@code closed});
 *   <li>{@value #HELD} (gauge): grants held now, tagged {@value #PRIMITIVE};
 *   <li>{@value #HOLD} (timer): how long each grant was held, tagged {@value #PRIMITIVE} and {@code end} ({@code
 *       released}, {@code already_lost}: the store no longer held it at the release, {@code lost}: reported lost);
 *   <li>{@value #LOST} (counter): grants lost (lease run out, refused, deleted behind the holder's back), tagged
 *       {@value #PRIMITIVE};
 *   <li>{@value #RENEW} (timer): lease renewals, tagged {@value #PRIMITIVE} and {@code outcome} ({@code renewed},
 *       {@code failed});
 *   <li>{@value #STORE_REQUESTS} (function counter): requests sent to the store by all the observer's lockers of the
 *       scheme, where the backend counts them (a closed locker's requests stay in the total: its last count is kept, not
 *       the locker).
 * </ul>
 *
 * <p>The tag {@code kind} of {@value #ACQUIRE} is older than the other kinds of grant and keeps its meaning (how the
 * grant was asked for), so what is granted has a tag of its own, the same on every meter: {@value #PRIMITIVE}.
 *
 * <p>Lock keys are not tags by default: their number is unbounded, and a meter per key would grow without end. Opt in
 * with {@link Builder#keyTag(boolean)} when the keys are few. With an {@link ObservationRegistry}, each acquisition is
 * also an {@link Observation} named {@value #ACQUISITION_OBSERVATION}, with the same low-cardinality tags and the key
 * as a high-cardinality one (in spans, never in metrics).
 */
public final class MicrometerLockObserver implements LockObserver {

    /** Timer: each acquisition's wait. */
    public static final String ACQUIRE = "distlock.acquire";
    /** Gauge: locks held now. */
    public static final String HELD = "distlock.held";
    /** Timer: how long each lock was held. */
    public static final String HOLD = "distlock.hold";
    /** Counter: locks lost. */
    public static final String LOST = "distlock.lost";
    /** Timer: lease renewals. */
    public static final String RENEW = "distlock.renew";
    /** Function counter: requests sent to the store. */
    public static final String STORE_REQUESTS = "distlock.store.requests";
    /** The tag that tells the primitives apart: what is granted, {@link LockKind#label()}. */
    public static final String PRIMITIVE = "primitive";
    /** The observation of each acquisition, for tracing. */
    public static final String ACQUISITION_OBSERVATION = "distlock.acquisition";

    private final MeterRegistry meters;
    private final Optional<ObservationRegistry> observations;
    private final boolean keyTag;
    private final ConcurrentHashMap<Tags, AtomicInteger> held = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, StoreRequests> storeRequests = new ConcurrentHashMap<>();

    private MicrometerLockObserver(Builder builder) {
        this.meters = builder.meters;
        this.observations = builder.observations;
        this.keyTag = builder.keyTag;
    }

    /** An observer recording into {@code meters}, without observations and without key tags. */
    public static MicrometerLockObserver create(MeterRegistry meters) {
        return builder(meters).build();
    }

    /** Starts an observer recording into {@code meters}. */
    public static Builder builder(MeterRegistry meters) {
        return new Builder(meters);
    }

    /** Settings of a {@link MicrometerLockObserver}. */
    public static final class Builder {
        private final MeterRegistry meters;
        private Optional<ObservationRegistry> observations = Optional.empty();
        private boolean keyTag;

        private Builder(MeterRegistry meters) {
            this.meters = Objects.requireNonNull(meters, "meters");
        }

        /** Also report each acquisition as an observation in {@code registry} (for tracing). */
        public Builder observations(ObservationRegistry registry) {
            this.observations = Optional.of(Objects.requireNonNull(registry, "registry"));
            return this;
        }

        /**
         * Whether meters carry the lock's key as tag {@code key} (default false: keys are unbounded, and each key
         * would make meters of its own).
         */
        public Builder keyTag(boolean keyTag) {
            this.keyTag = keyTag;
            return this;
        }

        /** The observer, to give to {@code RemoteLockerBuilder.observer}. */
        public MicrometerLockObserver build() {
            return new MicrometerLockObserver(this);
        }
    }

    @Override
    public void lockerOpened(String scheme, Optional<LongSupplier> storeRequests) {
        heldGauge(scheme, LockKind.LOCK); // the other kinds' gauges appear with their first grant
        storeRequests.ifPresent(count -> storeRequests(scheme).add(count));
    }

    @Override
    public void lockerClosed(String scheme, Optional<LongSupplier> storeRequests) {
        storeRequests.ifPresent(count -> storeRequests(scheme).closed(count));
    }

    /**
     * The sum of the request counts of every locker of {@code scheme}, registered once as {@value #STORE_REQUESTS}.
     * Micrometer keeps only a weak reference to a function counter's state and gives a second registration the first
     * one's meter: this object, kept here, is that state, and each locker's count is added to it.
     */
    private StoreRequests storeRequests(String scheme) {
        return storeRequests.computeIfAbsent(scheme, s -> {
            StoreRequests sum = new StoreRequests();
            FunctionCounter.builder(STORE_REQUESTS, sum, StoreRequests::total)
                    .description("Requests sent to the lock store")
                    .tags(Tags.of("store", s))
                    .register(meters);
            return sum;
        });
    }

    /**
     * The open lockers' own request counts, summed when the counter is read, and the closed lockers' last counts: a
     * closed locker's supplier reaches its backend, so it is not kept.
     */
    private static final class StoreRequests {
        private final List<LongSupplier> open = new ArrayList<>();
        private long closed;

        synchronized void add(LongSupplier count) {
            open.add(count);
        }

        synchronized void closed(LongSupplier count) {
            if (open.remove(count)) {
                closed += count.getAsLong();
            }
        }

        synchronized double total() {
            long total = closed;
            for (LongSupplier count : open) {
                total += count.getAsLong();
            }
            return total;
        }
    }

    /** An acquisition of the lock: as {@link #acquisitionStarted(String, String, Kind, LockKind)} with {@code LOCK}. */
    @Override
    public Acquisition acquisitionStarted(String scheme, String key, Kind kind) {
        return acquisitionStarted(scheme, key, kind, LockKind.LOCK);
    }

    /** Times the acquisition, tagged with how it was asked for and what it asks for, and observes it if asked to. */
    @Override
    public Acquisition acquisitionStarted(String scheme, String key, Kind kind, LockKind lockKind) {
        Tags tags = tags(scheme, key, lockKind).and("kind", name(kind));
        Timer.Sample sample = Timer.start(meters);
        Optional<Observation> observation =
                observations.map(registry -> Observation.createNotStarted(ACQUISITION_OBSERVATION, registry)
                        .contextualName("distlock acquire " + name(kind))
                        .lowCardinalityKeyValue("store", scheme)
                        .lowCardinalityKeyValue("kind", name(kind))
                        .lowCardinalityKeyValue(PRIMITIVE, lockKind.label())
                        .highCardinalityKeyValue("key", key)
                        .start());
        return new Acquisition() {
            @Override
            public Hold granted(RemoteLock lock) {
                finish("granted", null);
                return hold(scheme, key, lock.kind());
            }

            @Override
            public void ended(Outcome outcome, Throwable failure) {
                finish(name(outcome), failure);
            }

            private void finish(String outcome, Throwable failure) {
                sample.stop(Timer.builder(ACQUIRE)
                        .description("Waits for a lock, by outcome")
                        .tags(tags.and("outcome", outcome))
                        .register(meters));
                observation.ifPresent(o -> {
                    o.lowCardinalityKeyValue("outcome", outcome);
                    if (failure != null) {
                        o.error(failure);
                    }
                    o.stop();
                });
            }
        };
    }

    private Hold hold(String scheme, String key, LockKind lockKind) {
        Tags tags = tags(scheme, key, lockKind);
        AtomicInteger count = heldGauge(scheme, lockKind);
        count.incrementAndGet();
        Timer.Sample sample = Timer.start(meters);
        return new Hold() {
            @Override
            public void renewed(Duration took) {
                renewal("renewed", took);
            }

            @Override
            public void renewalFailed(Duration took, Throwable failure) {
                renewal("failed", took);
            }

            @Override
            public void lost(String reason) {
                Counter.builder(LOST)
                        .description("Locks lost while held")
                        .tags(tags)
                        .register(meters)
                        .increment();
                end("lost");
            }

            @Override
            public void released(ReleaseResult result) {
                end(name(result));
            }

            private void renewal(String outcome, Duration took) {
                Timer.builder(RENEW)
                        .description("Lease renewals, by outcome")
                        .tags(tags.and("outcome", outcome))
                        .register(meters)
                        .record(took);
            }

            private void end(String how) {
                count.decrementAndGet();
                sample.stop(Timer.builder(HOLD)
                        .description("How long locks were held, by how the hold ended")
                        .tags(tags.and("end", how))
                        .register(meters));
            }
        };
    }

    private AtomicInteger heldGauge(String scheme, LockKind lockKind) {
        return held.computeIfAbsent(Tags.of("store", scheme, PRIMITIVE, lockKind.label()), tags -> {
            AtomicInteger count = new AtomicInteger();
            Gauge.builder(HELD, count, AtomicInteger::get)
                    .description("Grants held now: locks, read and write locks, permits")
                    .tags(tags)
                    .strongReference(true)
                    .register(meters);
            return count;
        });
    }

    private Tags tags(String scheme, String key, LockKind lockKind) {
        Tags tags = Tags.of("store", scheme, PRIMITIVE, lockKind.label());
        return keyTag ? tags.and("key", key) : tags;
    }

    private static String name(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
