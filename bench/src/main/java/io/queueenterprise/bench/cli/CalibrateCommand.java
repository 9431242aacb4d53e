package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.calibrate.Calibration;
import io.queueenterprise.bench.harness.BenchConfig;
import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.BenchRunner;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code bin/qe calibrate}: on the CPUs this process was granted, the highest rate at which the
 * library, plain and in each crypto mode, holds the percentile under the bound at one message size;
 * one compact JSON document on stdout (docs/calibration-json-schema.md), progress on stderr.
 */
@Command(name = "calibrate", mixinStandardHelpOptions = true,
        description = {"Find the highest rate at p99 <= bound for the library plain and encrypted (each crypto mode)"
                + " on the cores this process was granted, and print one JSON document (<= 4 KiB) on stdout:"
                + " rates, ratios, percentiles, cores, JVM, noise, commit, time. Progress goes to stderr."})
public final class CalibrateCommand implements Callable<Integer> {

    @Option(names = "--size", description = "message size in bytes (default ${DEFAULT-VALUE})", defaultValue = "256")
    int size;

    @Option(names = "--bound", description = "latency bound, e.g. 10us, 500ns, 1ms (default ${DEFAULT-VALUE})",
            defaultValue = "10us")
    String bound;

    @Option(names = "--percentile", description = "percentile judged against the bound (default ${DEFAULT-VALUE})",
            defaultValue = "99")
    double percentile;

    @Option(names = "--time-limit", description = "seconds after which no new measurement starts (default ${DEFAULT-VALUE})",
            defaultValue = "300")
    double timeLimit;

    @Option(names = "--duration", description = "recorded seconds per run (default ${DEFAULT-VALUE})", defaultValue = "1")
    double duration;

    @Option(names = "--runs", description = "runs per point, the worst counts (default ${DEFAULT-VALUE})", defaultValue = "2")
    int runs;

    @Option(names = "--warmup", description = "JIT warm-up seconds per subject (default ${DEFAULT-VALUE})", defaultValue = "2")
    double warmup;

    @Option(names = "--min-rate", description = "lowest offered rate, msg/s (default ${DEFAULT-VALUE})", defaultValue = "10000")
    double minRate;

    @Option(names = "--max-rate", description = "highest offered rate, msg/s (default ${DEFAULT-VALUE})", defaultValue = "5000000")
    double maxRate;

    @Option(names = "--jvm", description = "java executable the subjects run on (default: this JVM's)")
    String jvm;

    @Option(names = "--queue-dir", description = "where queue files go (default /dev/shm if present)")
    String queueDir;

    @Option(names = "--no-pin", description = "do not pin producer/consumer threads")
    boolean noPin;

    @Option(names = "--output", description = "also write the document to this file, e.g. a Kubernetes pod's"
            + " terminationMessagePath (/dev/termination-log), where the operator reads it back")
    Path output;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        BenchConfig c = config();
        PrintStream stdout = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        PrintStream original = System.out;
        System.setOut(System.err); // anything a library prints must not corrupt the one JSON document
        BenchResult result;
        try {
            result = new BenchRunner(c, System.err).run(BenchCommand.commandLine(spec));
        } finally {
            System.setOut(original);
        }
        String document = Calibration.from(result).toJson();
        stdout.println(document);
        if (output != null) {
            Files.writeString(output, document, StandardCharsets.UTF_8);
        }
        return 0;
    }

    BenchConfig config() {
        Options o = new Options(spec.commandLine());
        BenchConfig c = BenchConfig.defaults();
        c.profile = "calibrate";
        c.subjects = new ArrayList<>(Calibration.subjectNames());
        c.messageSizes = new ArrayList<>(List.of(o.size("--size", size)));
        c.boundNs = o.bound("--bound", bound);
        c.percentile = o.percentile(percentile);
        c.timeLimitSeconds = o.seconds("--time-limit", timeLimit);
        c.durationSeconds = o.seconds("--duration", duration);
        c.runs = o.atLeastOne("--runs", runs);
        c.warmupSeconds = o.notNegative("--warmup", warmup);
        c.minRate = o.rate("--min-rate", minRate);
        c.maxRate = o.rate("--max-rate", maxRate);
        if (c.minRate > c.maxRate) {
            throw o.bad("--min-rate", c.minRate, "it must not exceed --max-rate (" + c.maxRate + ")");
        }
        if (jvm != null) {
            c.jvms = new ArrayList<>(List.of(o.java("--jvm", jvm)));
        }
        if (queueDir != null) {
            c.queueRoot = o.existingFolder("--queue-dir", queueDir);
        }
        c.pin = !noPin;
        c.jlbhRate = 0;
        c.progress = true;
        return c;
    }
}
