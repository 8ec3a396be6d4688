package io.distlock.etcd;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A gRPC interceptor for jetcd's client that holds back the next call of one etcd method (say {@code Txn}) for a
 * while, or until the test lets it go, before it leaves the client: the request reaches etcd late, after any request
 * sent meanwhile, while its caller's future may have long timed out. Calls of other methods, and later calls, pass at
 * once. Or it lets the next call go at once and holds back etcd's answer to it ({@link #holdAnswerOfNext}).
 */
final class DelayingInterceptor implements ClientInterceptor, AutoCloseable {

    /** The method whose next call is held back until {@code release} completes. */
    private record Armed(String method, CompletableFuture<Void> release) {}

    private final AtomicReference<Armed> armed = new AtomicReference<>();
    private final AtomicReference<ArmedAnswer> armedAnswer = new AtomicReference<>();
    private final CompletableFuture<Void> heldCallMade = new CompletableFuture<>();
    private final CompletableFuture<Void> delayedCallClosed = new CompletableFuture<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "delaying-interceptor");
        t.setDaemon(true);
        return t;
    });

    /** Holds back the next call of etcd method {@code method} (e.g. {@code "Txn"}) by {@code delay}. */
    void delayNext(String method, Duration delay) {
        CompletableFuture<Void> release = new CompletableFuture<>();
        armed.set(new Armed(method, release));
        heldCallMade.thenRun(() -> timer.schedule(() -> release.complete(null), delay.toNanos(), TimeUnit.NANOSECONDS));
    }

    /**
     * Holds back the next call of etcd method {@code method} (e.g. {@code "Watch"}) until the returned future is
     * completed; {@link #heldCallMade()} tells when the client has made that call.
     */
    CompletableFuture<Void> holdNext(String method) {
        CompletableFuture<Void> release = new CompletableFuture<>();
        armed.set(new Armed(method, release));
        return release;
    }

    /** Completes once the client has made the call that is held back (it has not left the client yet). */
    CompletableFuture<Void> heldCallMade() {
        return heldCallMade;
    }

    /**
     * Lets the next call of etcd method {@code method} go out at once, but holds back what etcd answers (its reply and
     * the call's end) until {@link Held#release()} completes: etcd applies the request, and the client hears of it
     * late. Armed after an earlier hold's call was made, it holds the call after that one.
     */
    Held holdAnswerOfNext(String method) {
        Held held = new Held(new CompletableFuture<>(), new CompletableFuture<>(), new CompletableFuture<>());
        armedAnswer.set(new ArmedAnswer(method, held));
        return held;
    }

    /**
     * An answer held back ({@link #holdAnswerOfNext}): {@code made} completes when the client has made the call, {@code
     * answered} when etcd's answer has reached the client (and is held), and completing {@code release} hands it on.
     */
    record Held(CompletableFuture<Void> made, CompletableFuture<Void> answered, CompletableFuture<Void> release) {}

    private record ArmedAnswer(String method, Held held) {}

    /** Completes once the delayed call has had etcd's answer (or failed). */
    CompletableFuture<Void> delayedCallClosed() {
        return delayedCallClosed;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(method, options);
        ArmedAnswer answer = armedAnswer.get();
        if (answer != null
                && method.getFullMethodName().endsWith("/" + answer.method())
                && armedAnswer.compareAndSet(answer, null)) {
            answer.held().made().complete(null);
            return new AnswerHeld<>(call, answer.held());
        }
        Armed a = armed.get();
        if (a == null || !method.getFullMethodName().endsWith("/" + a.method()) || !armed.compareAndSet(a, null)) {
            return call;
        }
        Delayed<Q, R> delayed = new Delayed<>(call, a.release());
        heldCallMade.complete(null);
        return delayed;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** Queues every step of the call until the delay has passed, then replays them in order. */
    private final class Delayed<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
        private final List<Runnable> queued = new ArrayList<>(); // guarded by this
        private boolean released; // guarded by this

        Delayed(ClientCall<Q, R> call, CompletableFuture<Void> release) {
            super(call);
            release.thenRunAsync(this::release, timer);
        }

        private synchronized void release() {
            released = true;
            queued.forEach(Runnable::run);
            queued.clear();
        }

        private synchronized void step(Runnable r) {
            if (released) {
                r.run();
            } else {
                queued.add(r);
            }
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            Listener<R> watching = new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    try {
                        super.onClose(status, trailers);
                    } finally {
                        delayedCallClosed.complete(null);
                    }
                }
            };
            step(() -> super.start(watching, headers));
        }

        @Override
        public void request(int n) {
            step(() -> super.request(n));
        }

        @Override
        public void sendMessage(Q message) {
            step(() -> super.sendMessage(message));
        }

        @Override
        public void halfClose() {
            step(super::halfClose);
        }

        @Override
        public void cancel(String message, Throwable cause) {
            step(() -> super.cancel(message, cause));
        }
    }

    /** Passes the call out at once; queues what etcd answers until the hold is released, then replays it in order. */
    private final class AnswerHeld<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
        private final Held held;
        private CompletableFuture<Void> tail; // guarded by this: the last answer step queued

        AnswerHeld(ClientCall<Q, R> call, Held held) {
            super(call);
            this.held = held;
            this.tail = held.release();
        }

        private synchronized void later(Runnable step) {
            tail = tail.thenRunAsync(step, timer);
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            super.start(
                    new Listener<R>() {
                        @Override
                        public void onHeaders(Metadata h) {
                            later(() -> listener.onHeaders(h));
                        }

                        @Override
                        public void onMessage(R message) {
                            later(() -> listener.onMessage(message));
                        }

                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            held.answered().complete(null);
                            later(() -> listener.onClose(status, trailers));
                        }

                        @Override
                        public void onReady() {
                            listener.onReady();
                        }
                    },
                    headers);
        }
    }
}
