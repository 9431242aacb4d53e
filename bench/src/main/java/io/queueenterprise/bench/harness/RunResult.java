package io.queueenterprise.bench.harness;

/**
 * One measured run at one offered rate.
 *
 * @param offeredRate       msg/s the producer was asked for
 * @param achievedRate      msg/s it really sent over the recorded part
 * @param rateKept          achieved >= 99% of offered and every sent message was received
 * @param sent              recorded messages sent
 * @param received          recorded messages received (= samples in the histogram)
 * @param maxLatenessNs     the most the producer fell behind an intended send time
 * @param endLatenessNs     how far behind it was at the last message (backlog at the end)
 * @param valueAtPercentileNs latency at the configured percentile
 * @param latencyNs         latency percentiles, ns (now - intended send time)
 */
public record RunResult(double offeredRate, double achievedRate, boolean rateKept, long sent,
                        long received, long maxLatenessNs, long endLatenessNs,
                        long valueAtPercentileNs, Percentiles latencyNs) {
}
