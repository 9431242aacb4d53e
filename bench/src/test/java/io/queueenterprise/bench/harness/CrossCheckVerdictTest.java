package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.harness.CrossCheckVerdict.Run;
import io.queueenterprise.bench.harness.CrossCheckVerdict.Status;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The cross-check's rule on made-up runs: no measurement, no timing. */
@org.junit.jupiter.api.Tag("unit")
@org.junit.jupiter.api.Timeout(60)
class CrossCheckVerdictTest {

    private static Run kept(long p50, long p99) {
        return new Run(p50, p99, true);
    }

    @Test
    void figuresWithinTheFloorOfTwoAgree() {
        var v = CrossCheckVerdict.judge(
                List.of(kept(10_000, 200_000), kept(11_000, 210_000), kept(12_000, 190_000)),
                List.of(kept(15_000, 300_000), kept(16_000, 280_000), kept(17_000, 320_000)));
        assertEquals(Status.AGREE, v.status(), v.reason());
        assertEquals(2, v.comparisons().size());
        assertEquals(2.0, v.comparisons().get(0).bound(), 1e-9, "tight runs: the floor is the bound");
        assertEquals(16_000, v.comparisons().get(0).harnessNs(), "the median run, not the worst");
    }

    @Test
    void theIssuesFiguresDisagreeLoudly() {
        // 2026-11 report: JLBH p50 1.0 us, p99 5.2 ms; the harness row p50 1,105 us, p99 41.6 ms
        var v = CrossCheckVerdict.judge(
                List.of(kept(1_000, 5_200_000), kept(1_100, 4_900_000), kept(1_000, 5_000_000)),
                List.of(kept(1_105_000, 41_600_000), kept(1_000_000, 40_000_000), kept(1_200_000, 42_000_000)));
        assertEquals(Status.DISAGREE, v.status());
        var p50 = v.comparisons().get(0);
        assertFalse(p50.agree());
        assertEquals(1_105_000, p50.harnessNs());
        assertEquals(1_000, p50.jlbhNs());
        assertTrue(v.reason().contains("DISAGREE") && v.reason().contains("1105 us") && v.reason().contains("1.0 us"),
                "the reason names both figures: " + v.reason());
        assertTrue(v.reason().contains("OUTSIDE [1/2.0, 2.0]"), "and the bound: " + v.reason());
    }

    @Test
    void theMachinesOwnSpreadWidensTheBound() {
        // JLBH's own runs differ 8x at p50: a 5x difference between the instruments is within that noise
        var noisy = List.of(kept(1_000_000, 9_000_000), kept(3_000_000, 10_000_000), kept(8_000_000, 11_000_000));
        var v = CrossCheckVerdict.judge(noisy,
                List.of(kept(15_000_000, 20_000_000), kept(14_000_000, 19_000_000), kept(16_000_000, 21_000_000)));
        assertEquals(8.0, v.comparisons().get(0).bound(), 1e-9);
        assertEquals(8.0, v.comparisons().get(0).jlbhSpread(), 1e-9);
        assertEquals(Status.AGREE, v.status(), v.reason());
        // ... but not a 20x one
        var far = CrossCheckVerdict.judge(noisy,
                List.of(kept(60_000_000, 20_000_000), kept(61_000_000, 19_000_000), kept(62_000_000, 21_000_000)));
        assertEquals(Status.DISAGREE, far.status(), far.reason());
    }

    @Test
    void subMicrosecondDifferencesAgreeWhateverTheRatio() {
        var v = CrossCheckVerdict.judge(List.of(kept(300, 900), kept(310, 950), kept(320, 990)),
                List.of(kept(900, 1_800), kept(950, 1_700), kept(1_000, 1_900)));
        assertEquals(Status.AGREE, v.status(), v.reason());
    }

    @Test
    void aPointPastCapacityIsNotComparedAtAll() {
        // 1000x apart, but one harness run could not keep the rate: the backlog, not a disagreement
        var v = CrossCheckVerdict.judge(List.of(kept(1_000, 5_000), kept(1_000, 5_000), kept(1_000, 5_000)),
                List.of(kept(1_000_000, 40_000_000), new Run(2_000_000, 60_000_000, false), kept(1_000_000, 40_000_000)));
        assertEquals(Status.NOT_COMPARABLE, v.status());
        assertTrue(v.reason().startsWith("not comparable (past capacity)"), v.reason());
        assertTrue(v.comparisons().isEmpty());
        var jlbhBehind = CrossCheckVerdict.judge(List.of(new Run(1_000, 5_000, false)), List.of(kept(1_000, 5_000)));
        assertEquals(Status.NOT_COMPARABLE, jlbhBehind.status(), "JLBH falling behind counts too");
    }

    @Test
    void aPercentileJlbhLeftOutIsSkippedAndNoRunsIsNotComparable() {
        var v = CrossCheckVerdict.judge(List.of(kept(1_000, -1)), List.of(kept(1_200, 50_000)));
        assertEquals(List.of("p50"), v.comparisons().stream().map(CrossCheckVerdict.Comparison::percentile).toList());
        assertEquals(Status.NOT_COMPARABLE, CrossCheckVerdict.judge(List.of(), List.of(kept(1, 1))).status());
    }
}
