package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.harness.Environment;
import io.queueenterprise.bench.harness.Provenance;
import io.queueenterprise.bench.ratio.PathRatios;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code bin/qe ratios}: the encrypted paths' throughput over the plain path's, measured interleaved so that the
 * ratios survive a loaded machine (see {@link PathRatios}).
 */
@Command(name = "ratios", mixinStandardHelpOptions = true,
        description = {"Append + read one excerpt at a time through raw Chronicle, the library plain, CTR and"
                + " authenticated, and the crypto alone; subjects interleaved in short slices, a fresh random order"
                + " per round, so their throughput ratios can be read on a loaded machine. Prints median ns/op and"
                + " ratios with their interquartile range, against issue 6's targets."})
public final class RatiosCommand implements Callable<Integer> {

    @Option(names = "--sizes", split = ",", description = "excerpt sizes in bytes (default ${DEFAULT-VALUE})", defaultValue = "40,256")
    List<Integer> sizes;

    @Option(names = "--slice", description = "append+read operations per subject per round (default ${DEFAULT-VALUE})",
            defaultValue = "5000")
    int slice;

    @Option(names = "--rounds", description = "measured rounds (default ${DEFAULT-VALUE})", defaultValue = "100")
    int rounds;

    @Option(names = "--warmup-rounds", description = "rounds run before measuring, for the JIT (default ${DEFAULT-VALUE})",
            defaultValue = "40")
    int warmupRounds;

    @Option(names = "--seed", description = "seed of the per-round orders (default ${DEFAULT-VALUE})", defaultValue = "1")
    long seed;

    @Option(names = "--only", description = "run only this subject (to attach a profiler); prints its ns/op, no ratios")
    String only;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        for (int size : sizes) {
            if (size < 1 || size > 1 << 20) {
                throw bad("--sizes: " + size + " is not between 1 and 1048576 bytes");
            }
        }
        if (slice < 1000) {
            throw bad("--slice must be at least 1000 operations (got " + slice + "): shorter slices measure the clock");
        }
        if (rounds < 3) {
            throw bad("--rounds must be at least 3 (got " + rounds + ")");
        }
        if (warmupRounds < 0) {
            throw bad("--warmup-rounds must be 0 or more (got " + warmupRounds + ")");
        }
        if (only != null && !PathRatios.SUBJECTS.contains(only)) {
            throw bad("--only: no subject named '" + only + "'; the subjects are " + PathRatios.SUBJECTS);
        }
        var machine = Environment.machine();
        var jvm = Environment.jvm();
        System.out.printf("Machine: %d CPUs, %s; JVM %s %s; load average before: %s; commit %s%n", machine.cpus(),
                machine.cpuModel(), jvm.vendor(), jvm.version(), loadAverage(), Provenance.of("ratios").gitCommit());
        for (int size : sizes) {
            PathRatios.Result result = new PathRatios(size, slice, rounds, warmupRounds, seed).only(only).run(System.err);
            PathRatios.print(result, System.out);
        }
        System.out.printf("Load average after: %s%n", loadAverage());
        return 0;
    }

    private CommandLine.ParameterException bad(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (Exception e) {
            return "unknown";
        }
    }
}
