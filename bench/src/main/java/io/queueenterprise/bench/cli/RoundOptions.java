package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.harness.Environment;
import io.queueenterprise.bench.harness.Provenance;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code ratios} and {@code follower-cost} share, both medians over rounds run in this JVM: the checks of
 * {@code --sizes}, the per-round count, {@code --rounds} and {@code --warmup-rounds} (each bad value a
 * {@link ParameterException} naming the option, before any work), and the lines about the machine and its load that
 * they print around the run, so that two builds' files can be compared.
 */
final class RoundOptions {
    private final CommandLine cmd;

    RoundOptions(CommandSpec spec) {
        this.cmd = spec.commandLine();
    }

    ParameterException bad(String message) {
        return new ParameterException(cmd, message);
    }

    /** Every size from 1 to {@code max} bytes; {@code why} (may be empty) follows the message. */
    void sizes(List<Integer> sizes, int max, String why) {
        for (int size : sizes) {
            if (size < 1 || size > max) {
                throw bad("--sizes: " + size + " is not between 1 and " + max + " bytes" + why);
            }
        }
    }

    /** {@code value} of {@code option} is at least {@code min} {@code unit}; {@code why} (may be empty) follows. */
    void atLeast(String option, int value, int min, String unit, String why) {
        if (value < min) {
            throw bad(option + " must be at least " + min + unit + " (got " + value + ")" + why);
        }
    }

    /** At least 3 measured rounds (a median and quartiles), and no negative warm-up. */
    void rounds(int rounds, int warmupRounds) {
        atLeast("--rounds", rounds, 3, "", "");
        if (warmupRounds < 0) {
            throw bad("--warmup-rounds must be 0 or more (got " + warmupRounds + ")");
        }
    }

    /** The first line of a run: machine, JVM, load average before, and the commit measured. */
    static void printMachine(String tool) {
        var machine = Environment.machine();
        var jvm = Environment.jvm();
        System.out.printf("Machine: %d CPUs, %s; JVM %s %s; load average before: %s; commit %s%n", machine.cpus(),
                machine.cpuModel(), jvm.vendor(), jvm.version(), loadAverage(), Provenance.of(tool).gitCommit());
    }

    /** The last line of a run. */
    static void printLoadAfter() {
        System.out.printf("Load average after: %s%n", loadAverage());
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
