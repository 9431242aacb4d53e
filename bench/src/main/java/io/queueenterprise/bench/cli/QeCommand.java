package io.queueenterprise.bench.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code bin/qe} entry point: one picocli command per job. */
@Command(name = "qe",
        mixinStandardHelpOptions = true,
        version = "Queue Enterprise 0.1.0-SNAPSHOT",
        description = "Queue Enterprise: encrypted, replicated, low-latency persisted queue.",
        subcommands = {
                CommandLine.HelpCommand.class,
                io.queueenterprise.bench.demo.DemoCommand.class,
                BenchCommand.class,
                JmhCommand.class,
        })
public final class QeCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new QeCommand()).execute(args));
    }
}
