package io.queueenterprise.bench.harness;

import java.util.List;
import java.util.Map;

/**
 * One subject at one message size.
 *
 * @param subject              subject name
 * @param role                 BASELINE, PLAIN, ENCRYPTED or PEER
 * @param messageSize          bytes
 * @param jvm                  the java executable the subject ran on
 * @param status               {@code ok}: a highest rate was bracketed by the binary search;
 *                             {@code time-limit}: the run's time limit stopped the sweep first;
 *                             {@code unreachable}: even the lowest rate missed the bound;
 *                             {@code at-max-rate}: every rate up to maxRate met it (lower bound)
 * @param highestRateAtBound   highest offered rate (msg/s) whose worst run met the bound with every
 *                             lower measured rate meeting it too; null when unreachable
 * @param highestRateByBoundUs the same rule applied to every bound of the ladder (µs -> msg/s or null),
 *                             from the measured points (coarse resolution except at the main bound)
 * @param bestRateByBoundUs    per ladder bound (µs): the highest measured rate that met it at all,
 *                             whatever happened at lower rates (optimistic: on a machine whose noise
 *                             comes and goes it shows what the subject does in a quiet window)
 * @param maxAchievedRate      the highest achieved rate of any point (saturation throughput with
 *                             no latency bound; the producer's view: a persisted queue accepts
 *                             writes faster than its consumer may read them)
 * @param capacity             the highest rate the consumer received at a point whose rate was kept
 *                             (producer on schedule, nothing lost, backlog bounded); null if none
 * @param outliers             messages over the bound at points whose rate was kept, by cause
 *                             (null when attribution was off)
 * @param points               every measured point, sorted by offered rate
 */
public record SweepResult(String subject, String role, int messageSize, String jvm, String status,
                          Double highestRateAtBound, Map<String, Double> highestRateByBoundUs,
                          Map<String, Double> bestRateByBoundUs, double maxAchievedRate, Double capacity,
                          Outliers.Summary outliers, List<PointResult> points) {

    /** Highest measured rate that passes {@code boundNs}, or null. */
    public static Double bestPassing(List<PointResult> points, long boundNs) {
        Double best = null;
        for (PointResult p : points) {
            if (p.passes(boundNs) && (best == null || p.offeredRate() > best)) {
                best = p.offeredRate();
            }
        }
        return best;
    }

    /** Highest rate such that every measured point at or below it passes {@code boundNs}. */
    public static Double highestPassing(List<PointResult> sortedPoints, long boundNs) {
        Double best = null;
        for (PointResult p : sortedPoints) {
            if (!p.passes(boundNs)) {
                break;
            }
            best = p.offeredRate();
        }
        return best;
    }
}
