package io.distlock.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.Transports;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutorGroup;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The Lettuce threads behind a locker's own clients ({@link OwnClient}): two I/O threads, two computation threads and
 * Lettuce's timer, shared by the locker's masters and shut down with it.
 *
 * <p>{@link #close()} stops them in an order. Every connection attempt arms a timer that, once the connect timeout has
 * passed, has a computation thread close the attempt's channel if its handshake never finished, as it does not when a
 * master refuses the connection (a stopped or restarting master: every reconnection of an outage is such an attempt).
 * That close is a task for the channel's I/O thread; one handed over after that thread has ended is refused, and
 * Netty logs the refusal as an ERROR with a stack trace. Left to Lettuce, the I/O threads end as the last client shuts
 * down, and the computation threads when the resources do, whatever they still have to run. Here the resources keep
 * a hold on the I/O threads of their own, so that they outlive the clients; the computation threads are stopped first
 * and waited for (at most a second), running what they were given; a timer that fires meanwhile closes its channel
 * itself; then Lettuce's shutdown stops the timer (waiting for one firing) and only then the I/O threads, waited for
 * as the last client's shutdown waited for them before. None waits a quiet period: a locker's close takes no longer.
 */
final class OwnResources implements AutoCloseable {

    private final EventExecutorGroup computation;
    private final ClientResources lettuce;
    private final EventExecutorGroup io;

    OwnResources() {
        computation = new DefaultEventExecutorGroup(2, new DefaultThreadFactory("lettuce-eventExecutorLoop", true));
        lettuce = DefaultClientResources.builder()
                .ioThreadPoolSize(2)
                .eventExecutorGroup(computation)
                // A restarted master is back within a second, not after Lettuce's default backoff of up to 30s.
                .reconnectDelay(
                        Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        // The clients take the I/O threads from here and end them as the last one shuts down, unless held elsewhere.
        io = lettuce.eventLoopGroupProvider().allocate(Transports.eventLoopGroupClass());
    }

    /** What the clients are built on. */
    ClientResources lettuce() {
        return lettuce;
    }

    /** Whether the computation and I/O threads have ended (the timer's has when {@link #close()} returns). */
    boolean terminated() {
        return computation.isTerminated() && io.isTerminated();
    }

    /**
     * Stops the computation threads, then the timer and the I/O threads, waiting for each (at most a second); call once
     * the clients are shut down.
     */
    @Override
    public void close() {
        computation.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(1, TimeUnit.SECONDS);
        lettuce.shutdown(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(1, TimeUnit.SECONDS);
    }
}
