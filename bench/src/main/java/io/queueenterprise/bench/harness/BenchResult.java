package io.queueenterprise.bench.harness;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;
import java.util.Map;

/**
 * The root of the JSON report. Its shape is documented in docs/bench-json-schema.md; bump
 * {@link #SCHEMA_VERSION} on any incompatible change.
 */
@JsonPropertyOrder({"schemaVersion", "tool", "generatedAt", "provenance", "elapsedSeconds", "machine",
        "jvm", "subjectJvms", "noise", "pinning", "configuration", "subjects", "results", "ratios", "separation",
        "jdkComparison", "jlbhCrossCheck", "notes"})
public record BenchResult(int schemaVersion, String tool, String generatedAt, Provenance provenance,
                          double elapsedSeconds, Environment.Machine machine, Environment.Jvm jvm,
                          Map<String, Environment.Jvm> subjectJvms, NoiseProbe noise,
                          Pinning.PinningInfo pinning, BenchConfig configuration,
                          List<SubjectInfo> subjects, List<SweepResult> results, List<Ratios> ratios,
                          List<Separation> separation, List<JdkComparison.Entry> jdkComparison,
                          JlbhCrossCheck.Result jlbhCrossCheck, List<String> notes) {

    public static final int SCHEMA_VERSION = 2;

    /** A subject as registered. */
    public record SubjectInfo(String name, String role, boolean persists, String description) {
    }

    /**
     * Ratios of highest rates at one bound and message size, from one run of the instrument.
     *
     * @param boundUs             the bound the rates were taken at
     * @param libraryPlainOverRaw library plain / raw Chronicle Queue (null if either is missing)
     * @param encryptedOverPlain  encrypted subject -> its rate / library plain
     * @param capacityPlainOverRaw       the same ratio of {@link SweepResult#capacity()} (rate received
     *                                   with the rate kept, no latency bound): NOT comparable with
     *                                   ratios taken at a latency bound
     * @param capacityEncryptedOverPlain the same ratios of capacity
     */
    public record Ratios(int messageSize, double boundUs, String baseline, String plain,
                         Double libraryPlainOverRaw, Map<String, Double> encryptedOverPlain,
                         Double capacityPlainOverRaw, Map<String, Double> capacityEncryptedOverPlain) {
    }

    /**
     * Where the main bound is unreachable for every subject: the smallest ladder bound at which at
     * least one subject passes, and each subject's highest rate there.
     *
     * @param mainBoundReachedBy   subjects meeting the main bound at any rate
     * @param separationBoundUs    smallest ladder bound where >= 1 subject passes (null if none)
     * @param highestRateAtSeparationBound subject -> highest rate at that bound (null = not met)
     * @param bestSeparationBoundUs        the same with the optimistic rule (any measured rate
     *                                     meeting the bound counts, see SweepResult.bestRateByBoundUs)
     * @param bestRateAtBestSeparationBound subject -> best rate at that bound
     */
    public record Separation(int messageSize, List<String> mainBoundReachedBy, Integer separationBoundUs,
                             Map<String, Double> highestRateAtSeparationBound, Integer bestSeparationBoundUs,
                             Map<String, Double> bestRateAtBestSeparationBound) {
    }
}
