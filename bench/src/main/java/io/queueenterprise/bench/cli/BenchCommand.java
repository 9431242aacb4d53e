package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.harness.BenchConfig;
import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.BenchRunner;
import io.queueenterprise.bench.report.Charts;
import io.queueenterprise.bench.report.ConsoleTable;
import io.queueenterprise.bench.report.JsonReport;
import io.queueenterprise.bench.report.MarkdownReport;
import io.queueenterprise.bench.subject.SubjectFactory;
import io.queueenterprise.bench.subject.SubjectRegistry;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code bin/qe bench}: highest throughput at a latency percentile bound, every subject, one harness. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Open-loop rate sweep: the highest offered rate at which the chosen latency percentile"
                + " stays under the bound, for raw Chronicle Queue, the library (plain and encrypted) and"
                + " in-process peers, each in a JVM of its own, in a random order per round; messages over the"
                + " bound attributed to GC, safepoints, lost CPU or code; JDK comparison with several --jvm;"
                + " JLBH cross-check; console table, JSON, Markdown and PNG charts."})
public final class BenchCommand implements Callable<Integer> {

    @Option(names = "--profile", description = "quick (< 2 min on 2 cores) or default (~10-15 min). Default: ${DEFAULT-VALUE}",
            defaultValue = "default")
    String profile;

    @Option(names = "--bound", description = "latency bound, e.g. 10us, 500ns, 1ms (default 10us)")
    String bound;

    @Option(names = "--percentile", description = "percentile judged against the bound (default 99)")
    Double percentile;

    @Option(names = "--sizes", split = ",", description = "message sizes in bytes (default 40,256)")
    List<Integer> sizes;

    @Option(names = "--subjects", split = ",", description = "subjects to run (default: all). See --list-subjects")
    List<String> subjects;

    @Option(names = "--duration", description = "recorded seconds per run (quick 0.25, default 1.0)")
    Double duration;

    @Option(names = "--runs", description = "runs per point, worst counts (quick 1, default 3)")
    Integer runs;

    @Option(names = "--warmup", description = "JIT warm-up seconds per subject and size (quick 0.5, default 2)")
    Double warmup;

    @Option(names = "--min-rate", description = "lowest offered rate, msg/s")
    Double minRate;

    @Option(names = "--max-rate", description = "highest offered rate, msg/s (default 5000000)")
    Double maxRate;

    @Option(names = "--resolution", description = "binary search stops at hi/lo <= 1 + this (quick 0.10, default 0.05)")
    Double resolution;

    @Option(names = "--ladder", split = ",", description = "bounds in us for the separation ladder (default 10,20,50,100,200,500,1000)")
    List<Integer> ladder;

    @Option(names = {"-o", "--out"}, description = "output folder (default bench-results/<timestamp>)")
    Path out;

    @Option(names = "--queue-dir", description = "where queue files go (default /dev/shm if present, else java.io.tmpdir); deleted after each run")
    String queueDir;

    @Option(names = "--consumer-process", description = "consume persisting subjects in ANOTHER process reading the same queue")
    boolean consumerProcess;

    @Option(names = "--no-pin", description = "do not pin producer/consumer threads")
    boolean noPin;

    @Option(names = "--jlbh-rate", description = "JLBH cross-check rate msg/s, 0 = skip (default 100000)")
    Double jlbhRate;

    @Option(names = "--jlbh-subject", description = "JLBH cross-check subject (default library-plain)")
    String jlbhSubject;

    @Option(names = "--jvm", split = ",", description = "java executables; the sweep runs on the first, and with"
            + " two or more every JDK-comparison subject runs on each (default: this JVM's java)")
    List<String> jvms;

    @Option(names = "--jdk-rate", description = "JDK comparison rate, msg/s (default 100000)")
    Double jdkRate;

    @Option(names = "--jdk-size", description = "JDK comparison message size, bytes (default 256)")
    Integer jdkSize;

    @Option(names = "--jdk-seconds", description = "JDK comparison recorded seconds per run (quick 1, default 5)")
    Double jdkSeconds;

    @Option(names = "--jdk-subjects", split = ",", description = "JDK comparison subjects (default: --subjects)")
    List<String> jdkSubjects;

    @Option(names = "--no-sweep", description = "skip the rate sweep (only the JDK comparison and the JLBH cross-check)")
    boolean noSweep;

    @Option(names = "--no-attribution", description = "do not attribute messages over the bound (no JFR recording)")
    boolean noAttribution;

    @Option(names = "--in-process", description = "run every subject in this JVM instead of one JVM per subject"
            + " (biased: subjects share call sites and JIT profiles; for debugging)")
    boolean inProcess;

    @Option(names = "--order-seed", description = "seed of the random subject order per round (default: random, recorded)")
    Long orderSeed;

    @Option(names = "--report-from", description = "measure nothing: write summary.json, report.md and the charts into"
            + " --out from a bench.json or summary.json (how docs/perf-data becomes the figures in docs)")
    Path reportFrom;

    @Option(names = "--no-progress", description = "no progress bar / progress lines")
    boolean noProgress;

    @Option(names = "--list-subjects", description = "list the registered subjects and exit")
    boolean listSubjects;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        var stdout = spec.commandLine().getOut();
        if (listSubjects) {
            for (SubjectFactory f : SubjectRegistry.all()) {
                stdout.printf("%-22s %-9s %s%n", f.name(), f.role(), f.description());
            }
            stdout.flush();
            return 0;
        }
        if (reportFrom != null) {
            return regenerate();
        }
        BenchConfig c = config(); // every option checked before any work starts
        BenchResult result = new BenchRunner(c, System.err).run(commandLine(spec));
        Path json = c.outDir.resolve("bench.json");
        JsonReport.write(result, json);
        Path summary = c.outDir.resolve("summary.json");
        JsonReport.writeSummary(result, summary);
        List<String> charts = Charts.write(result, c.outDir);
        MarkdownReport.write(result, charts, c.outDir.resolve("report.md"));
        List<Path> written = new java.util.ArrayList<>(List.of(json, summary, c.outDir.resolve("report.md")));
        if (result.jlbhCrossCheck() != null && result.jlbhCrossCheck().jlbhOutput() != null) {
            Files.writeString(c.outDir.resolve("jlbh.txt"), result.jlbhCrossCheck().jlbhOutput());
            written.add(c.outDir.resolve("jlbh.txt"));
        }
        charts.forEach(f -> written.add(c.outDir.resolve(f)));
        java.io.PrintStream ps = System.out;
        ConsoleTable.print(result, ps);
        ps.printf("%nWrote in %.0f s:%n", result.elapsedSeconds());
        written.forEach(p -> ps.println("  " + p));
        return 0;
    }

    /** {@code --report-from}: the report and charts of a stored result, nothing measured. */
    private int regenerate() throws Exception {
        Options o = new Options(spec.commandLine());
        if (!Files.isRegularFile(reportFrom)) {
            throw o.bad("--report-from", reportFrom, "give a bench.json or summary.json written by qe bench");
        }
        BenchResult result;
        try {
            result = JsonReport.read(reportFrom);
        } catch (java.io.IOException e) {
            throw o.bad("--report-from", reportFrom, "it is not a bench result (" + e.getClass().getSimpleName() + ")");
        }
        if (result.schemaVersion() != BenchResult.SCHEMA_VERSION) {
            throw o.bad("--report-from", reportFrom, "its schemaVersion is " + result.schemaVersion()
                    + "; this build reads " + BenchResult.SCHEMA_VERSION);
        }
        Path dir = o.folder("--out", out != null ? out : reportFrom.toAbsolutePath().getParent());
        Path summary = dir.resolve("summary.json");
        if (!Files.exists(summary) || !Files.isSameFile(summary, reportFrom)) {
            JsonReport.writeSummary(result, summary); // bench.json -> the compact summary kept in docs
        }
        List<String> charts = Charts.write(result, dir);
        MarkdownReport.write(result, charts, dir.resolve("report.md"));
        System.out.println("Wrote:");
        System.out.println("  " + summary);
        System.out.println("  " + dir.resolve("report.md"));
        charts.forEach(f -> System.out.println("  " + dir.resolve(f)));
        return 0;
    }

    /** The command as the user typed it: {@code bin/qe} and every argument, the subcommand's name included. */
    static String commandLine(CommandLine.Model.CommandSpec spec) {
        List<String> args = spec.root().commandLine().getParseResult().originalArgs();
        String prefix = spec.root() == spec ? "bin/qe " + spec.name() : "bin/qe";
        return (prefix + " " + String.join(" ", args)).trim();
    }

    /**
     * Runs {@code qe bench --profile quick} plus {@code extraArgs}, e.g. as the last step of
     * {@code qe demo}; returns the exit code.
     */
    public static int runQuickProfile(String... extraArgs) {
        String[] args = new String[extraArgs.length + 2];
        args[0] = "--profile";
        args[1] = "quick";
        System.arraycopy(extraArgs, 0, args, 2, extraArgs.length);
        return new CommandLine(new BenchCommand()).execute(args);
    }

    BenchConfig config() {
        Options o = new Options(spec.commandLine());
        BenchConfig c = switch (profile.toLowerCase(Locale.ROOT)) {
            case "quick" -> BenchConfig.quick();
            case "default" -> BenchConfig.defaults();
            default -> throw o.bad("--profile", profile, "use quick or default");
        };
        if (bound != null) c.boundNs = o.bound("--bound", bound);
        if (percentile != null) c.percentile = o.percentile(percentile);
        if (sizes != null) {
            sizes.forEach(size -> o.size("--sizes", size));
            c.messageSizes = new java.util.ArrayList<>(sizes);
        }
        if (subjects != null) {
            subjects.forEach(name -> o.subject("--subjects", name));
            c.subjects = new java.util.ArrayList<>(subjects);
        }
        if (duration != null) c.durationSeconds = o.seconds("--duration", duration);
        if (runs != null) c.runs = o.atLeastOne("--runs", runs);
        if (warmup != null) c.warmupSeconds = o.notNegative("--warmup", warmup);
        if (minRate != null) c.minRate = o.rate("--min-rate", minRate);
        if (maxRate != null) c.maxRate = o.rate("--max-rate", maxRate);
        if (c.minRate > c.maxRate) {
            throw o.bad("--min-rate", c.minRate, "it must not exceed --max-rate (" + c.maxRate + ")");
        }
        if (resolution != null) {
            if (!(resolution > 0 && resolution <= 1)) {
                throw o.bad("--resolution", resolution, "use a number greater than 0 and at most 1, e.g. 0.05");
            }
            c.resolution = resolution;
        }
        if (ladder != null) c.ladderUs = new java.util.ArrayList<>(o.ladder(ladder));
        if (queueDir != null) c.queueRoot = o.existingFolder("--queue-dir", queueDir);
        if (jlbhRate != null) {
            c.jlbhRate = jlbhRate == 0 ? 0 : o.rate("--jlbh-rate", jlbhRate);
        }
        if (jlbhSubject != null) c.jlbhSubject = o.subject("--jlbh-subject", jlbhSubject);
        if (jvms != null) {
            c.jvms = new java.util.ArrayList<>();
            jvms.forEach(j -> c.jvms.add(o.java("--jvm", j)));
        }
        if (jdkRate != null) c.jdkRate = o.rate("--jdk-rate", jdkRate);
        if (jdkSize != null) c.jdkSize = o.size("--jdk-size", jdkSize);
        if (jdkSeconds != null) c.jdkSeconds = o.seconds("--jdk-seconds", jdkSeconds);
        if (jdkSubjects != null) {
            jdkSubjects.forEach(name -> o.subject("--jdk-subjects", name));
            c.jdkSubjects = new java.util.ArrayList<>(jdkSubjects);
        }
        if (orderSeed != null) c.orderSeed = orderSeed;
        c.sweep = !noSweep;
        c.attribution = !noAttribution;
        c.forkSubjects = !inProcess;
        c.pin = !noPin;
        c.consumerProcess = consumerProcess;
        c.progress = !noProgress;
        c.outDir = o.folder("--out", out != null ? out
                : Path.of("bench-results", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))));
        return c;
    }
}
