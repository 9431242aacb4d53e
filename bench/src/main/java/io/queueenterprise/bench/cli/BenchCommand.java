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
                + " in-process peers; JLBH cross-check; console table, JSON, Markdown and PNG charts."})
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
        BenchConfig c = config();
        Files.createDirectories(c.outDir);
        String command = "bin/qe bench " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
        BenchResult result = new BenchRunner(c, System.err).run(command.trim());
        Path json = c.outDir.resolve("bench.json");
        JsonReport.write(result, json);
        List<String> charts = Charts.write(result, c.outDir);
        MarkdownReport.write(result, charts, c.outDir.resolve("report.md"));
        if (result.jlbhCrossCheck() != null) {
            Files.writeString(c.outDir.resolve("jlbh.txt"), result.jlbhCrossCheck().jlbhOutput());
        }
        java.io.PrintStream ps = System.out;
        ConsoleTable.print(result, ps);
        ps.printf("%nWrote %s, %s, %s in %.0f s%n", json, c.outDir.resolve("report.md"), charts, result.elapsedSeconds());
        return 0;
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
        BenchConfig c = switch (profile.toLowerCase(Locale.ROOT)) {
            case "quick" -> BenchConfig.quick();
            case "default" -> BenchConfig.defaults();
            default -> throw new CommandLine.ParameterException(spec.commandLine(),
                    "--profile must be quick or default, got " + profile);
        };
        if (bound != null) c.boundNs = parseNanos(bound);
        if (percentile != null) c.percentile = percentile;
        if (sizes != null) c.messageSizes = sizes;
        if (subjects != null) {
            subjects.forEach(SubjectRegistry::get); // fail fast on unknown names
            c.subjects = subjects;
        }
        if (duration != null) c.durationSeconds = duration;
        if (runs != null) c.runs = runs;
        if (warmup != null) c.warmupSeconds = warmup;
        if (minRate != null) c.minRate = minRate;
        if (maxRate != null) c.maxRate = maxRate;
        if (resolution != null) c.resolution = resolution;
        if (ladder != null) c.ladderUs = ladder;
        if (queueDir != null) c.queueRoot = queueDir;
        if (jlbhRate != null) c.jlbhRate = jlbhRate;
        if (jlbhSubject != null) c.jlbhSubject = SubjectRegistry.get(jlbhSubject).name();
        c.pin = !noPin;
        c.consumerProcess = consumerProcess;
        c.progress = !noProgress;
        c.outDir = out != null ? out
                : Path.of("bench-results", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        return c;
    }

    /** "10us", "10µs", "500ns", "1ms", "0.5ms", or a bare number of microseconds. */
    static long parseNanos(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        double mult = 1000;
        if (t.endsWith("ns")) {
            mult = 1;
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("us") || t.endsWith("µs")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("ms")) {
            mult = 1_000_000;
            t = t.substring(0, t.length() - 2);
        }
        return Math.round(Double.parseDouble(t.trim()) * mult);
    }
}
