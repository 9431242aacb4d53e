package io.queueenterprise.bench.calibrate;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.NoiseProbe;
import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.SweepResult;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figure the operator publishes: one compact JSON document (schema {@value #SCHEMA}, see
 * docs/calibration-json-schema.md) that fits a Kubernetes termination message (4 KiB) or a
 * ConfigMap value. Built from a {@link BenchResult} by a pure function, so its size and shape are
 * testable without a measurement.
 *
 * @param schema         {@value #SCHEMA}
 * @param time           ISO-8601 instant the calibration ended
 * @param commit         git commit of the instrument ("unknown" outside a work tree)
 * @param dirty          the work tree had uncommitted changes (null: unknown)
 * @param cores          CPUs this process was granted and whether producer/consumer were pinned
 * @param jvm            vendor and version of the JVM the subjects ran on
 * @param messageSize    bytes
 * @param percentile     e.g. 99.0
 * @param boundUs        the latency bound asked for
 * @param noise          the machine's noise before the run
 * @param subjects       "plain", "ctr", "ctr-poly1305" -> figures at the bound
 * @param ratios         "ctr/plain", "ctr-poly1305/plain" -> ratio of highest rates at the bound (null: unreachable)
 * @param verdict        "ok": every subject met the bound; "unreachable": at least one did not at any
 *                       rate; "time-limit": the time limit stopped the search first (rates are lower bounds)
 * @param heldBoundUs    when not "ok": the smallest ladder bound at which every subject held a rate (null: none)
 * @param ratiosAtHeldBound the ratios at heldBoundUs
 * @param elapsedSeconds wall time of the calibration
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record Calibration(String schema, String time, String commit, Boolean dirty, Cores cores, String jvm,
                          int messageSize, double percentile, double boundUs, Noise noise,
                          Map<String, Figure> subjects, Map<String, Double> ratios, String verdict,
                          Integer heldBoundUs, Map<String, Double> ratiosAtHeldBound, double elapsedSeconds) {

    public static final String SCHEMA = "qe-calibration/1";
    /** A Kubernetes termination message holds at most 4096 bytes. */
    public static final int MAX_BYTES = 4096;

    /** @param granted Cpus_allowed_list, e.g. "2-3"; @param count CPUs granted; @param pinned threads pinned */
    public record Cores(String granted, int count, boolean pinned) {
    }

    /** Per pinned role: share of the core lost (%) and the largest stall (µs), from the busy-spin probe. */
    public record Noise(double producerLostPct, double consumerLostPct, double maxStallUs) {
    }

    /**
     * @param status          ok / at-max-rate / unreachable / time-limit (as in bench.json)
     * @param rate            highest offered msg/s meeting the bound (null: unreachable)
     * @param p50Us           at that rate, µs (null: unreachable)
     * @param p99Us           the configured percentile at that rate, µs
     * @param capacity        highest rate received with the schedule kept, any latency (msg/s)
     * @param smallestBoundUs smallest ladder bound this subject held at some rate (null: none)
     */
    public record Figure(String status, Long rate, Double p50Us, Double p99Us, Long capacity, Integer smallestBoundUs) {
    }

    /** The calibration of {@code r}; its subjects are mapped by name ("library-ctr" -> "ctr"). */
    public static Calibration from(BenchResult r) {
        var c = r.configuration();
        int size = c.messageSizes.get(0);
        Map<String, Figure> figures = new LinkedHashMap<>();
        Map<String, SweepResult> bySubject = new LinkedHashMap<>();
        for (SweepResult s : r.results()) {
            if (s.messageSize() != size) {
                continue;
            }
            String key = s.subject().startsWith("library-") ? s.subject().substring("library-".length()) : s.subject();
            bySubject.put(key, s);
            PointResult at = atHighest(s);
            Integer smallest = null;
            for (int us : c.ladderUs) {
                if (s.highestRateByBoundUs().get(Integer.toString(us)) != null) {
                    smallest = us;
                    break;
                }
            }
            figures.put(key, new Figure(s.status(), round(s.highestRateAtBound()),
                    at == null ? null : us(at.latencyNs().p50()), at == null ? null : us(at.valueAtPercentileNs()),
                    round(s.capacity()), smallest));
        }
        boolean allMet = !bySubject.isEmpty() && bySubject.values().stream().allMatch(s -> s.highestRateAtBound() != null);
        boolean timeLimited = bySubject.values().stream().anyMatch(s -> "time-limit".equals(s.status()));
        String verdict = allMet ? (timeLimited ? "time-limit" : "ok") : timeLimited ? "time-limit" : "unreachable";
        Map<String, Double> ratios = ratios(bySubject, null);
        Integer held = null;
        Map<String, Double> atHeld = null;
        if (!allMet) {
            for (int us : c.ladderUs) {
                String k = Integer.toString(us);
                if (us * 1000L > c.boundNs && !bySubject.isEmpty()
                        && bySubject.values().stream().allMatch(s -> s.highestRateByBoundUs().get(k) != null)) {
                    held = us;
                    atHeld = ratios(bySubject, k);
                    break;
                }
            }
        }
        NoiseProbe n = r.noise();
        Noise noise = n == null ? null : new Noise(pct(n, "producer"), pct(n, "consumer"),
                us(n.threads().stream().mapToLong(NoiseProbe.ThreadNoise::maxGapNs).max().orElse(0)));
        String jvm = r.subjectJvms() != null && !r.subjectJvms().isEmpty()
                ? r.subjectJvms().values().iterator().next().vendor() + " " + r.subjectJvms().values().iterator().next().version()
                : r.jvm().vendor() + " " + r.jvm().version();
        return new Calibration(SCHEMA, r.generatedAt(), r.provenance().gitCommit(), r.provenance().gitDirty(),
                new Cores(clip(r.pinning().grantedList(), 200), r.pinning().cpus(), r.pinning().enabled()),
                clip(jvm, 120), size, c.percentile, c.boundNs / 1000.0, noise, figures, ratios, verdict, held, atHeld,
                Math.round(r.elapsedSeconds() * 10) / 10.0);
    }

    /** Compact JSON; throws if it would not fit {@link #MAX_BYTES}. */
    public String toJson() {
        try {
            String json = new ObjectMapper().writeValueAsString(this);
            int bytes = json.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_BYTES) {
                throw new IllegalStateException("calibration JSON is " + bytes + " bytes, over the " + MAX_BYTES
                        + "-byte limit of a termination message");
            }
            return json;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Double> ratios(Map<String, SweepResult> bySubject, String ladderKey) {
        Map<String, Double> out = new LinkedHashMap<>();
        SweepResult plain = bySubject.get("plain");
        for (Map.Entry<String, SweepResult> e : bySubject.entrySet()) {
            if (e.getKey().equals("plain")) {
                continue;
            }
            Double a = rateAt(e.getValue(), ladderKey);
            Double b = plain == null ? null : rateAt(plain, ladderKey);
            out.put(e.getKey() + "/plain", a == null || b == null || b == 0 ? null : Math.round(a / b * 1000) / 1000.0);
        }
        return out;
    }

    private static Double rateAt(SweepResult s, String ladderKey) {
        return ladderKey == null ? s.highestRateAtBound() : s.highestRateByBoundUs().get(ladderKey);
    }

    private static PointResult atHighest(SweepResult s) {
        if (s.highestRateAtBound() == null) {
            return null;
        }
        for (PointResult p : s.points()) {
            if (p.offeredRate() == s.highestRateAtBound()) {
                return p;
            }
        }
        return null;
    }

    private static double pct(NoiseProbe n, String role) {
        return n.threads().stream().filter(t -> t.role().equals(role))
                .mapToDouble(t -> Math.round(t.lostFraction() * 1000) / 10.0).findFirst().orElse(0);
    }

    private static Long round(Double rate) {
        return rate == null ? null : Math.round(rate);
    }

    private static double us(long ns) {
        return Math.round(ns / 100.0) / 10.0;
    }

    private static String clip(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max);
    }

    /** The subjects calibrate measures: the library plain and each crypto mode. */
    public static List<String> subjectNames() {
        return List.of("library-plain", "library-ctr", "library-ctr-poly1305");
    }
}
