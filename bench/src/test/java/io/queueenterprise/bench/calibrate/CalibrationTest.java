package io.queueenterprise.bench.calibrate;

import io.queueenterprise.bench.harness.BenchConfig;
import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.Environment;
import io.queueenterprise.bench.harness.NoiseProbe;
import io.queueenterprise.bench.harness.Percentiles;
import io.queueenterprise.bench.harness.Pinning;
import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.Provenance;
import io.queueenterprise.bench.harness.SweepResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The operator's figure as a pure function of a bench result: verdicts, the bound it can hold, size. */
@org.junit.jupiter.api.Tag("unit")
class CalibrationTest {

    private static final List<Integer> LADDER = List.of(10, 20, 50, 100, 200);

    /** A sweep whose highest rate at each ladder bound is given (µs -> msg/s; absent = unreachable). */
    private static SweepResult sweep(String subject, Double atMainBound, Map<Integer, Double> byBound) {
        Map<String, Double> ladder = new LinkedHashMap<>();
        for (int us : LADDER) {
            ladder.put(Integer.toString(us), byBound.get(us));
        }
        List<PointResult> points = new ArrayList<>();
        if (atMainBound != null) {
            points.add(new PointResult(atMainBound, "search", atMainBound, atMainBound, true, 1000, 9_000, true, 0,
                    new Percentiles(1_000, 2_000, 9_000, 20_000, 30_000, 40_000), List.of()));
        }
        return new SweepResult(subject, "PLAIN", 256, "java", atMainBound == null ? "unreachable" : "ok", atMainBound,
                ladder, ladder, 1e6, 9e5, null, points);
    }

    private static BenchResult result(List<SweepResult> sweeps) {
        BenchConfig c = BenchConfig.defaults();
        c.messageSizes = new ArrayList<>(List.of(256));
        c.ladderUs = new ArrayList<>(LADDER);
        c.boundNs = 10_000;
        Environment.Jvm jvm = new Environment.Jvm("17.0.15", "Vendor", "VM", List.of(), null);
        return new BenchResult(BenchResult.SCHEMA_VERSION, "qe bench", "2026-11-22T00:00:00Z",
                new Provenance("abc", false, "bin/qe calibrate", "java"), 12.3, null, jvm, Map.of(),
                new NoiseProbe(1, "0", "0", List.of(new NoiseProbe.ThreadNoise("producer", 1, 0, 5_000, 0.01),
                        new NoiseProbe.ThreadNoise("consumer", 1, 0, 7_000, 0.02))),
                new Pinning.PinningInfo(true, 2, "2-3", "plan", Map.of()), c, List.of(), sweeps, List.of(), List.of(),
                List.of(), null, List.of());
    }

    @Test
    void everySubjectAtTheBoundGivesOkAndTheRatios() {
        Calibration cal = Calibration.from(result(List.of(
                sweep("library-plain", 1_000_000.0, Map.of(10, 1_000_000.0)),
                sweep("library-ctr", 700_000.0, Map.of(10, 700_000.0)),
                sweep("library-ctr-poly1305", 500_000.0, Map.of(10, 500_000.0)))));
        assertEquals("ok", cal.verdict());
        assertEquals(0.7, cal.ratios().get("ctr/plain"));
        assertEquals(0.5, cal.ratios().get("ctr-poly1305/plain"));
        assertNull(cal.heldBoundUs());
        assertEquals(1_000_000L, cal.subjects().get("plain").rate());
        assertEquals(9.0, cal.subjects().get("plain").p99Us());
        assertEquals("2-3", cal.cores().granted());
    }

    /** Unreachable for one subject: say so, and give the smallest bound all three hold, with ratios there. */
    @Test
    void anUnreachableBoundIsReportedWithTheSmallestBoundEverySubjectHolds() {
        Calibration cal = Calibration.from(result(List.of(
                sweep("library-plain", 1_000_000.0, Map.of(10, 1_000_000.0, 50, 1_000_000.0, 100, 1_000_000.0)),
                sweep("library-ctr", null, Map.of(50, 400_000.0, 100, 600_000.0)),
                sweep("library-ctr-poly1305", null, Map.of(100, 300_000.0)))));
        assertEquals("unreachable", cal.verdict());
        assertNull(cal.ratios().get("ctr/plain"));
        assertEquals(100, cal.heldBoundUs());
        assertEquals(0.6, cal.ratiosAtHeldBound().get("ctr/plain"));
        assertEquals(0.3, cal.ratiosAtHeldBound().get("ctr-poly1305/plain"));
        assertEquals(50, cal.subjects().get("ctr").smallestBoundUs());
        assertEquals("unreachable", cal.subjects().get("ctr-poly1305").status());
    }

    @Test
    void theDocumentFitsATerminationMessage() {
        Calibration cal = Calibration.from(result(List.of(
                sweep("library-plain", 1_234_567.0, Map.of(10, 1_234_567.0)),
                sweep("library-ctr", null, Map.of(200, 1_234_567.0)),
                sweep("library-ctr-poly1305", null, Map.of()))));
        String json = cal.toJson();
        assertTrue(json.getBytes(StandardCharsets.UTF_8).length <= Calibration.MAX_BYTES, json);
        assertTrue(json.startsWith("{\"schema\":\"" + Calibration.SCHEMA + "\""), json);
    }
}
