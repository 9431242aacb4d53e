package io.queueenterprise.bench.harness;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.HdrHistogram.Histogram;

/** Latency percentiles in nanoseconds. */
@JsonPropertyOrder({"p50", "p90", "p99", "p99.9", "p99.99", "max"})
public record Percentiles(
        @JsonProperty("p50") long p50,
        @JsonProperty("p90") long p90,
        @JsonProperty("p99") long p99,
        @JsonProperty("p99.9") long p999,
        @JsonProperty("p99.99") long p9999,
        @JsonProperty("max") long max) {

    public static Percentiles of(Histogram h) {
        if (h.getTotalCount() == 0) {
            return new Percentiles(0, 0, 0, 0, 0, 0);
        }
        return new Percentiles(h.getValueAtPercentile(50), h.getValueAtPercentile(90),
                h.getValueAtPercentile(99), h.getValueAtPercentile(99.9),
                h.getValueAtPercentile(99.99), h.getMaxValue());
    }
}
