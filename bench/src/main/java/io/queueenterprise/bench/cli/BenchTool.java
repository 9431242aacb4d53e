package io.queueenterprise.bench.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The bench module's own entry point: {@code bin/qe bench|calibrate|jmh ...} runs
 * {@code java ... io.queueenterprise.bench.cli.BenchTool <subcommand> ...}, so the product's
 * command line does not pull JMH, charting and peer queues onto its class path.
 */
@Command(name = "qe",
        mixinStandardHelpOptions = true,
        version = "Queue Enterprise bench 0.1.0-SNAPSHOT",
        description = "Queue Enterprise measuring instrument: rate sweep at a latency bound, calibration, JMH.",
        subcommands = {
                CommandLine.HelpCommand.class,
                BenchCommand.class,
                CalibrateCommand.class,
                JmhCommand.class,
                RatiosCommand.class,
                FollowerCostCommand.class,
        })
public final class BenchTool implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchTool()).execute(args));
    }
}
