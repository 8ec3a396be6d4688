/**
 * Parts that backends may use to implement {@link io.distlock.spi}, and that tools and tests may use beside it;
 * nothing here must be implemented. For backends: {@link io.distlock.toolkit.PollingAcquisition} runs the wait of a
 * store that can only be polled (with wake-ups from {@link io.distlock.toolkit.WakeUps}), {@link
 * io.distlock.toolkit.LeaseLoss} records a loss once, {@link io.distlock.toolkit.HostList}, {@link
 * io.distlock.toolkit.TlsSettings} and {@link io.distlock.toolkit.RequestTimeouts} read common options, and {@link
 * io.distlock.toolkit.DurationText} reads and writes durations as users type them, and {@link
 * io.distlock.toolkit.ShownText} quotes a refused value in a message, short and on one line. For tools and tests:
 * {@link io.distlock.toolkit.OwnerIds} makes owner ids as the locker does, for driving a backend directly, and {@link
 * io.distlock.toolkit.ManualTicker} is a ticker that moves only when told.
 */
package io.distlock.toolkit;
