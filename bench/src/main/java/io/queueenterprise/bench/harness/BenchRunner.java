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
        List<SubjectFactory> factories = new ArrayList<>();
        for (String name : config.subjects) {
            factories.add(SubjectRegistry.get(name));
        }
        Pinning pinning = new Pinning(config.pin);
        List<String> notes = new ArrayList<>();
        if (!pinning.info().enabled()) {
            notes.add("Threads not pinned: " + pinning.info().plan());
        }
        NoiseProbe noise = NoiseProbe.measure(config.noiseProbeSeconds, pinning);
        err.printf("[qe bench] machine noise (busy-spin probe, %.1f s): %s; load average %s%n",
                noise.seconds(), noise.threads(), noise.loadAvgStart());
        SubjectFactory jlbhFactory = null;
        if (config.jlbhRate > 0) {
            String name = config.jlbhSubject;
            if (name == null) {
                name = SubjectRegistry.names().contains("library-plain") ? "library-plain" : "chronicle-raw";
            }
            jlbhFactory = SubjectRegistry.get(name);
        }
        long planned = RateSweep.plannedRuns(config) * factories.size() * config.messageSizes.size()
                + (jlbhFactory == null ? 0 : 1);
        List<SweepResult> results = new ArrayList<>();
        JlbhCrossCheck.Result jlbh = null;
        RemoteConsumerProcess child = null;
        if (config.consumerProcess) {
            child = new RemoteConsumerProcess(config.pin);
            OpenLoopRun.useRemoteConsumer(child);
            notes.add("Consumer in another process (same queue files, same classpath, @bin/jvm.args) for the persisting"
                    + " subjects; in-process peers and the JLBH cross-check keep a consumer thread.");
        }
        try (Progress progress = Progress.create(config.progress, planned, err)) {
            RateSweep sweep = new RateSweep(config, pinning, progress);
            for (int size : config.messageSizes) {
                results.addAll(sweep.sweepAll(factories, size));
            }
            if (jlbhFactory != null) {
                progress.message("JLBH cross-check: " + jlbhFactory.name() + " @ " + RateSweep.fmtRate(config.jlbhRate));
                OpenLoopRun.useRemoteConsumer(null);
                jlbh = JlbhCrossCheck.run(jlbhFactory, config.messageSizes.get(0), config.jlbhRate, config, pinning);
                progress.step("JLBH cross-check");
            }
        } finally {
            OpenLoopRun.useRemoteConsumer(null);
            if (child != null) {
                child.close();
            }
        }
        List<BenchResult.SubjectInfo> subjects = new ArrayList<>();
        for (SubjectFactory f : factories) {
            subjects.add(new BenchResult.SubjectInfo(f.name(), f.role().name(), f.persists(), f.description()));
        }
        List<BenchResult.Separation> separation = separation(results);
        List<BenchResult.Ratios> ratios = ratios(factories, results, separation);
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
            for (PointResult p : r.points()) {
                if (!p.rateKept()) {
                    notes.add(String.format("%s %d B @ %s msg/s: rate not kept (achieved %s msg/s)", r.subject(),
                            r.messageSize(), RateSweep.fmtRate(p.offeredRate()), RateSweep.fmtRate(p.achievedRate())));
                }
            }
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        return new BenchResult(BenchResult.SCHEMA_VERSION, "qe bench", Instant.now().toString(), command,
                elapsed, Environment.machine(), Environment.jvm(),
                noise.withLoadAvgEnd(NoiseProbe.loadAvg()), pinning.info(), config, subjects, results,
                ratios, separation, jlbh, notes);
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
                cap.put(r.subject(), r.maxAchievedRate());
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
