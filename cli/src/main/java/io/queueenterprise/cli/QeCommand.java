package io.queueenterprise.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;

/**
 * The product's {@code bin/qe} entry point. The measuring commands ({@code bench}, {@code jmh}) live
 * in the bench module with their own libraries; {@code bin/qe} starts them there, so this classpath
 * holds only the library and picocli.
 */
@Command(name = "qe",
        mixinStandardHelpOptions = true,
        versionProvider = QeCommand.Version.class,
        description = "Queue Enterprise: a persisted Chronicle Queue whose excerpts can be encrypted"
                + " (AES-128-CTR, authenticated with one-time Poly1305 keys by default).",
        subcommands = {
                CommandLine.HelpCommand.class,
                DemoCommand.class,
                VerifyCommand.class,
                WriteKeysCommand.class,
                IdentityCommand.class,
                NodeCommand.class,
        },
        footer = {"",
                "Measuring commands, run by bin/qe from the bench module (its own classpath):",
                "  bench  open-loop latency/throughput sweep, peers side by side (--help)",
                "  calibrate  the highest rate at a p99 bound on this process's cores, as compact JSON",
                "  jmh    JMH micro-benchmarks (-h)",
                "",
                "bin/qe demo ends with bin/qe bench --profile quick (--no-bench skips it)."})
public final class QeCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with its error handling: every bad option gives its one line, then the usage, exit 2. */
    static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new QeCommand());
        commandLine.setParameterExceptionHandler((e, args) -> {
            CommandLine failed = e.getCommandLine();
            PrintWriter err = failed.getErr();
            err.println(e.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
            failed.usage(err);
            return CommandLine.ExitCode.USAGE;
        });
        return commandLine;
    }

    /** The project version, written into version.properties by the build. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties properties = new Properties();
            try (InputStream in = QeCommand.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    properties.load(in);
                }
            }
            return new String[]{"Queue Enterprise " + properties.getProperty("version", "(version unknown)")};
        }
    }
}
