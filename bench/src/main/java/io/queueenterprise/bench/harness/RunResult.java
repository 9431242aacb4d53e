package io.queueenterprise.bench.harness;

/**
 * One measured run at one offered rate.
 *
 * @param offeredRate         msg/s the producer was asked for
 * @param achievedRate        msg/s the producer really sent over the recorded part
 * @param receivedRate        msg/s the consumer really received: recorded messages over the time
 *                            from the first recorded intended send to the last receipt
 * @param rateKept            the producer kept its schedule (achieved >= 99% of offered), every
 *                            message arrived and the consumer kept up (received >= 99% of offered,
 *                            i.e. the backlog stayed bounded)
 * @param sent                recorded messages sent
 * @param received            recorded messages received (= samples in the histogram)
 * @param maxLatenessNs       the most the producer fell behind an intended send time
 * @param endLatenessNs       how far behind it was at the last message
 * @param consumerLagNs       last receipt minus the last intended send time (backlog at the end)
 * @param valueAtPercentileNs latency at the configured percentile
 * @param latencyNs           latency percentiles, ns (now - intended send time)
 * @param outliers            messages over the bound and what coincided with them (null when
 *                            attribution was off)
 */
public record RunResult(double offeredRate, double achievedRate, double receivedRate, boolean rateKept, long sent,
                        long received, long maxLatenessNs, long endLatenessNs, long consumerLagNs,
                        long valueAtPercentileNs, Percentiles latencyNs, Outliers.Summary outliers) {
}
