package io.distlock.lockctl.bench;

import java.util.List;

/**
 * The raw per-acquisition data of one contended run (seed 000's Figure 1), in milliseconds since the common start.
 *
 * @param summary the run's figures
 * @param grantMs per party (process p's thread t at {@code p * threads + t}), per acquisition: when the lock was
 *     granted
 * @param waitMs per party, per acquisition: how long the attempt waited
 */
public record RunData(RunSummary summary, List<double[]> grantMs, List<double[]> waitMs) {}
