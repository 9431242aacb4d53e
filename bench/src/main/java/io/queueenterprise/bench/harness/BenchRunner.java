package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.SubjectFactory;
import io.queueenterprise.bench.subject.SubjectRegistry;

import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Runs every subject at every size through the same sweep, then the JLBH cross-check. */
public final class BenchRunner {

    private final BenchConfig config;
    private final PrintStream err;

    public BenchRunner(BenchConfig config, PrintStream err) {
        this.config = config;
        this.err = err;
    }

    public BenchResult run(String command) throws Exception {
        long t0 = System.nanoTime();
        if (config.queueRoot == null) {
            config.queueRoot = BenchConfig.defaultQueueRoot();
        }
        if (config.subjects.isEmpty()) {
            config.subjects.addAll(SubjectRegistry.names());
        }
        if (config.jvms.isEmpty()) {
            config.jvms.add(SubjectWorkers.currentJava());
        }
        List<SubjectFactory> factories = new ArrayList<>();
        for (String name : config.subjects) {
            factories.add(SubjectRegistry.get(name));
        }
        Provenance provenance = Provenance.of(command);
        Pinning pinning = new Pinning(config.pin);
        List<String> notes = new ArrayList<>();
        if (!pinning.info().enabled()) {
            notes.add("Threads not pinned: " + pinning.info().plan());
        }
        if (Boolean.TRUE.equals(provenance.gitDirty())) {
            notes.add("Built from a work tree with uncommitted changes to " + provenance.gitCommit());
        }
        NoiseProbe noise = NoiseProbe.measure(config.noiseProbeSeconds, pinning);
        err.println("[qe bench] machine noise (busy-spin probe, " + noise.seconds() + " s): " + noise.inWords()
                + "; load average " + noise.loadAvgStart());
        SubjectFactory jlbhFactory = null;
        if (config.jlbhRate > 0) {
            String name = config.jlbhSubject;
            if (name == null) {
                name = SubjectRegistry.names().contains("library-plain") ? "library-plain" : "chronicle-raw";
            }
            jlbhFactory = SubjectRegistry.get(name);
        }
        List<SubjectFactory> jdkFactories = new ArrayList<>();
        if (config.jvms.size() > 1) {
            for (String name : config.jdkSubjects.isEmpty() ? config.subjects : config.jdkSubjects) {
                jdkFactories.add(SubjectRegistry.get(name));
            }
        }
        long planned = (config.sweep ? RateSweep.plannedRuns(config) * factories.size() * config.messageSizes.size() : 0)
                + (jlbhFactory == null ? 0 : 1) + (long) jdkFactories.size() * config.jvms.size() * config.runs;
        List<SweepResult> results = new ArrayList<>();
        List<JdkComparison.Entry> jdks = new ArrayList<>();
        JlbhCrossCheck.Result jlbh = null;
        Map<String, Environment.Jvm> subjectJvms;
        if (config.consumerProcess) {
            notes.add("Consumer in another process (same queue files, same classpath, @bin/jvm.args) for the persisting"
                    + " subjects; in-process peers and the JLBH cross-check keep a consumer thread; no outlier"
                    + " attribution for runs consumed in another process.");
        }
        if (config.forkSubjects) {
            notes.add("Each subject ran in a JVM of its own (per java executable), started with the same flag file"
                    + " and classpath; subjects ran in a random order per round (seed " + config.orderSeed + ").");
        }
        boolean timeLimitHit = false;
        try (Progress progress = Progress.create(config.progress, planned, err);
             SubjectWorkers workers = new SubjectWorkers(config, pinning)) {
            if (config.sweep) {
                RateSweep sweep = new RateSweep(config, workers, progress, t0);
                for (int size : config.messageSizes) {
                    results.addAll(sweep.sweepAll(factories, size, config.jvms.get(0)));
                }
                timeLimitHit = sweep.timeLimitHit();
            }
            if (!jdkFactories.isEmpty()) {
                jdks = JdkComparison.run(jdkFactories, config.jvms, config, workers, progress);
            }
            if (jlbhFactory != null) {
                progress.message("JLBH cross-check: " + jlbhFactory.name() + " @ " + RateSweep.fmtRate(config.jlbhRate));
                jlbh = JlbhCrossCheck.run(jlbhFactory, config.messageSizes.get(0), config.jlbhRate, config, pinning);
                progress.step("JLBH cross-check");
            }
            subjectJvms = Map.copyOf(workers.jvms());
        }
        if (timeLimitHit) {
            notes.add(String.format("The time limit (%.0f s) stopped the sweep early: results marked time-limit are"
                    + " lower bounds at coarse resolution.", config.timeLimitSeconds));
        }
        List<BenchResult.SubjectInfo> subjects = new ArrayList<>();
        for (SubjectFactory f : factories) {
            subjects.add(new BenchResult.SubjectInfo(f.name(), f.role().name(), f.persists(), f.description()));
        }
        // without a sweep there is nothing to separate or take ratios of
        List<BenchResult.Separation> separation = config.sweep ? separation(results) : List.of();
        List<BenchResult.Ratios> ratios = config.sweep ? ratios(factories, results, separation) : List.of();
        for (BenchResult.Separation s : separation) {
            if (s.mainBoundReachedBy().isEmpty()) {
                notes.add(String.format("%d B: no subject met p%s <= %.0f us at any rate on this machine; "
                                + "the smallest ladder bound at which a subject passes is %s.",
                        s.messageSize(), RateSweep.fmtPct(config.percentile), config.boundNs / 1000.0,
                        s.separationBoundUs() == null ? "none of " + config.ladderUs + " us (machine noise dominates)"
                                : s.separationBoundUs() + " us"));
            }
        }
        for (SweepResult r : results) {
            List<String> notKept = new ArrayList<>();
            for (PointResult p : r.points()) {
                if (!p.rateKept()) {
                    notKept.add(String.format("%s (producer %s, consumer %s)", RateSweep.fmtRate(p.offeredRate()),
                            RateSweep.fmtRate(p.achievedRate()), RateSweep.fmtRate(p.receivedRate())));
                }
            }
            if (!notKept.isEmpty()) {
                notes.add(String.format("%s %d B: rate not kept at %s msg/s", r.subject(), r.messageSize(),
                        String.join(", ", notKept)));
            }
        }
        if (jlbh != null && jlbh.verdict().status() != CrossCheckVerdict.Status.AGREE) {
            // loud, but not an exit status: qe demo runs the quick profile on machines that may be loaded
            notes.add((jlbh.verdict().status() == CrossCheckVerdict.Status.DISAGREE ? "JLBH CROSS-CHECK DISAGREES: "
                    : "JLBH cross-check ") + jlbh.verdict().reason());
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        return new BenchResult(BenchResult.SCHEMA_VERSION, "qe bench", Instant.now().toString(), provenance,
                elapsed, Environment.machine(), Environment.jvm(), subjectJvms,
                noise.withLoadAvgEnd(NoiseProbe.loadAvg()), pinning.info(), config, subjects, results,
                ratios, separation, jdks, jlbh, notes);
    }

    private List<BenchResult.Separation> separation(List<SweepResult> results) {
        List<BenchResult.Separation> out = new ArrayList<>();
        for (int size : config.messageSizes) {
            List<String> reached = new ArrayList<>();
            Integer sepBound = null;
            for (SweepResult r : results) {
                if (r.messageSize() == size && r.highestRateAtBound() != null) {
                    reached.add(r.subject());
                }
            }
            if (reached.isEmpty()) {
                for (int us : config.ladderUs) {
                    if (us * 1000L <= config.boundNs) {
                        continue;
                    }
                    boolean any = results.stream().anyMatch(r -> r.messageSize() == size
                            && r.highestRateByBoundUs().get(Integer.toString(us)) != null);
                    if (any) {
                        sepBound = us;
                        break;
                    }
                }
            }
            Map<String, Double> rates = new LinkedHashMap<>();
            for (SweepResult r : results) {
                if (r.messageSize() == size) {
                    rates.put(r.subject(), sepBound == null ? r.highestRateAtBound()
                            : r.highestRateByBoundUs().get(Integer.toString(sepBound)));
                }
            }
            Integer bestBound = null;
            for (int us : config.ladderUs) {
                boolean any = results.stream().anyMatch(r -> r.messageSize() == size
                        && r.bestRateByBoundUs().get(Integer.toString(us)) != null);
                if (any) {
                    bestBound = us;
                    break;
                }
            }
            Map<String, Double> best = new LinkedHashMap<>();
            if (bestBound != null) {
                for (SweepResult r : results) {
                    if (r.messageSize() == size) {
                        best.put(r.subject(), r.bestRateByBoundUs().get(Integer.toString(bestBound)));
                    }
                }
            }
            out.add(new BenchResult.Separation(size, reached, sepBound, rates, bestBound, best));
        }
        return out;
    }

    private List<BenchResult.Ratios> ratios(List<SubjectFactory> factories, List<SweepResult> results,
                                            List<BenchResult.Separation> separation) {
        String baseline = null;
        String plain = null;
        List<String> encrypted = new ArrayList<>();
        for (SubjectFactory f : factories) {
            switch (f.role()) {
                case BASELINE -> baseline = baseline == null ? f.name() : baseline;
                case PLAIN -> plain = plain == null ? f.name() : plain;
                case ENCRYPTED -> encrypted.add(f.name());
                default -> { }
            }
        }
        List<BenchResult.Ratios> out = new ArrayList<>();
        for (BenchResult.Separation s : separation) {
            int size = s.messageSize();
            out.add(ratiosAt(size, config.boundNs / 1000.0, baseline, plain, encrypted, results, null));
            if (s.separationBoundUs() != null) {
                out.add(ratiosAt(size, s.separationBoundUs(), baseline, plain, encrypted, results,
                        Integer.toString(s.separationBoundUs())));
            }
        }
        return out;
    }

    private static BenchResult.Ratios ratiosAt(int size, double boundUs, String baseline, String plain,
                                               List<String> encrypted, List<SweepResult> results, String ladderKey) {
        Map<String, Double> rate = new LinkedHashMap<>();
        Map<String, Double> cap = new LinkedHashMap<>();
        for (SweepResult r : results) {
            if (r.messageSize() == size) {
                rate.put(r.subject(), ladderKey == null ? r.highestRateAtBound() : r.highestRateByBoundUs().get(ladderKey));
                cap.put(r.subject(), r.capacity());
            }
        }
        Map<String, Double> capEnc = new LinkedHashMap<>();
        for (String e : encrypted) {
            capEnc.put(e, ratio(cap.get(e), cap.get(plain)));
        }
        Double plainOverRaw = ratio(rate.get(plain), rate.get(baseline));
        Map<String, Double> enc = new LinkedHashMap<>();
        for (String e : encrypted) {
            enc.put(e, ratio(rate.get(e), rate.get(plain)));
        }
        return new BenchResult.Ratios(size, boundUs, baseline, plain, plainOverRaw, enc,
                ratio(cap.get(plain), cap.get(baseline)), capEnc);
    }

    private static Double ratio(Double a, Double b) {
        return a == null || b == null || b == 0 ? null : a / b;
    }
}
