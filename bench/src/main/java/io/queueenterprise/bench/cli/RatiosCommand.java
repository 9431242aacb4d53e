package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.ratio.PathRatios;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

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

    @Option(names = "--replicated", description = "measure replication instead (issue 18): the local encrypted library,"
            + " replicated-async and replicated-quorum (pipelined), remote-append-async and remote-append-quorum (a remote"
            + " client's writeAsync, its window kept full), each on a two-node cluster in this process with the leader"
            + " lease, in wall time")
    boolean replicated;

    @Option(names = "--send-batching-us", description = "with --replicated: the remote clients' sendBatching linger in"
            + " microseconds, 0 to 1000000 (0: each append sent as written), or 'default' for the client's own (adaptive);"
            + " default ${DEFAULT-VALUE}", defaultValue = "100")
    String sendBatching;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        RoundOptions check = new RoundOptions(spec);
        check.sizes(sizes, 1 << 20, "");
        check.atLeast("--slice", slice, 1000, " operations", ": shorter slices measure the clock");
        check.rounds(rounds, warmupRounds);
        if (!replicated && spec.commandLine().getParseResult().hasMatchedOption("--send-batching-us")) {
            throw check.bad("--send-batching-us: only with --replicated (it sets the remote clients' linger)");
        }
        java.time.Duration linger;
        if ("default".equals(sendBatching)) {
            linger = null;
        } else {
            long micros;
            try {
                micros = Long.parseLong(sendBatching);
            } catch (NumberFormatException e) {
                throw check.bad("--send-batching-us: '" + sendBatching + "' is neither a number of microseconds nor 'default'");
            }
            if (micros < 0 || micros > 1_000_000) {
                throw check.bad("--send-batching-us: " + micros + " is not in 0..1000000 (microseconds; 0: no batching)");
            }
            linger = java.time.Duration.ofNanos(micros * 1000);
        }
        List<String> subjects = replicated ? PathRatios.REPLICATED_SUBJECTS : PathRatios.SUBJECTS;
        if (only != null && !subjects.contains(only)) {
            throw check.bad("--only: no subject named '" + only + "'; the subjects are " + subjects);
        }
        RoundOptions.printMachine("ratios");
        for (int size : sizes) {
            PathRatios.Result result = new PathRatios(size, slice, rounds, warmupRounds, seed).only(only)
                    .replicated(replicated)
                    .remoteSendBatching(linger).run(System.err);
            PathRatios.print(result, System.out);
        }
        RoundOptions.printLoadAfter();
        return 0;
    }
}
