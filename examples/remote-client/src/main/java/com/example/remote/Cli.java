package com.example.remote;

import java.time.Duration;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * Runs a command: a wrong option is one line naming it on stderr and exit code 2 (the options: {@code --help}); and the
 * checks the commands share, each naming the option it refuses.
 */
final class Cli {
    private Cli() {
    }

    static int execute(Object command, String... args) {
        CommandLine commandLine = new CommandLine(command);
        commandLine.setParameterExceptionHandler((e, arguments) -> {
            e.getCommandLine().getErr().println(e.getCommandLine().getCommandName() + ": " + e.getMessage()
                + " (--help lists the options)");
            return 2;
        });
        return commandLine.execute(args);
    }

    /** A wrong value: {@link #execute} prints {@code message} as the command's one line, exit code 2. */
    static ParameterException bad(CommandSpec spec, String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** {@code value}, when given, is 1 or more. */
    static void requirePositive(CommandSpec spec, String option, Integer value) {
        if (value != null && value < 1) {
            throw bad(spec, option + ": " + value + " is not a positive number");
        }
    }

    /** {@code value}, when given, is above zero (the converter refuses negative durations). */
    static void requireAboveZero(CommandSpec spec, String option, Duration value) {
        if (value != null && value.isZero()) {
            throw bad(spec, option + ": must be above zero");
        }
    }
}
