package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.ratio.FollowerCost;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code bin/qe follower-cost}: a replication follower's CPU time per excerpt it stores (see {@link FollowerCost}),
 * to compare two builds on a loaded machine: run it alternately on each.
 */
@Command(name = "follower-cost", mixinStandardHelpOptions = true,
        description = {"A leader and a follower in this JVM on UDP loopback; each round appends a burst on the leader"
                + " and waits for the follower to hold it; the follower's duty and writer threads are timed in their"
                + " own CPU time. Prints the median CPU ns per excerpt over the rounds, with the interquartile range."})
public final class FollowerCostCommand implements Callable<Integer> {

    @Option(names = "--sizes", split = ",", description = "excerpt sizes in bytes (default ${DEFAULT-VALUE})", defaultValue = "64,1024")
    List<Integer> sizes;

    @Option(names = "--excerpts", description = "excerpts per round (default ${DEFAULT-VALUE})", defaultValue = "20000")
    int excerpts;

    @Option(names = "--rounds", description = "measured rounds (default ${DEFAULT-VALUE})", defaultValue = "15")
    int rounds;

    @Option(names = "--warmup-rounds", description = "rounds run before measuring, for the JIT (default ${DEFAULT-VALUE})",
            defaultValue = "10")
    int warmupRounds;

    @Option(names = "--idle", description = "the nodes' idle strategy: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE});"
            + " SLEEPING leaves out most of the idling between batches", defaultValue = "BACKOFF")
    io.queueenterprise.replication.config.NodeConfig.IdleStrategySpec idle;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        RoundOptions check = new RoundOptions(spec);
        check.sizes(sizes, 60_000, " (one excerpt per batch at most)");
        check.atLeast("--excerpts", excerpts, 1000, "", ": shorter rounds measure the polling");
        check.rounds(rounds, warmupRounds);
        RoundOptions.printMachine("follower-cost");
        for (int size : sizes) {
            FollowerCost.Result result;
            try {
                result = new FollowerCost(size, excerpts, rounds, warmupRounds).idleStrategy(idle).run(System.err);
            } catch (FollowerCost.Stopped stopped) { // the hook said so in one line: no stack trace of the closed node
                return 130;
            }
            FollowerCost.print(result, System.out);
        }
        RoundOptions.printLoadAfter();
        return 0;
    }
}
