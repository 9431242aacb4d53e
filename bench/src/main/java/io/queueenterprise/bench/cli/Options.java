package io.queueenterprise.bench.cli;

import io.queueenterprise.bench.subject.SubjectRegistry;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Checks of option values shared by {@code bench} and {@code calibrate}: each bad value becomes a
 * {@link ParameterException} whose message is one line naming the option and what is allowed
 * (picocli prints it with the usage and exits with code 2), before any work starts.
 */
final class Options {

    static final int MAX_MESSAGE_SIZE = 1 << 20;

    private final CommandLine cmd;

    Options(CommandLine cmd) {
        this.cmd = cmd;
    }

    ParameterException bad(String option, Object value, String allowed) {
        return new ParameterException(cmd, option + ": '" + value + "' is not allowed; " + allowed);
    }

    double positive(String option, double v) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw bad(option, v, "use a number greater than 0");
        }
        return v;
    }

    double rate(String option, double v) {
        if (!(v >= 1) || v > 100_000_000) {
            throw bad(option, v, "use a rate in msg/s from 1 to 100000000");
        }
        return v;
    }

    double notNegative(String option, double v) {
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw bad(option, v, "use 0 or a positive number");
        }
        return v;
    }

    double seconds(String option, double v) {
        if (!(v > 0) || v > 3600) {
            throw bad(option, v, "use seconds greater than 0 and at most 3600");
        }
        return v;
    }

    int atLeastOne(String option, int v) {
        if (v < 1 || v > 1000) {
            throw bad(option, v, "use a whole number from 1 to 1000");
        }
        return v;
    }

    double percentile(double v) {
        if (!(v > 0 && v < 100)) {
            throw bad("--percentile", v, "use a percentile greater than 0 and less than 100, e.g. 99 or 99.9");
        }
        return v;
    }

    int size(String option, int v) {
        if (v < Long.BYTES || v > MAX_MESSAGE_SIZE) {
            throw bad(option, v, "use message sizes from 8 bytes (the send timestamp) to " + MAX_MESSAGE_SIZE + " bytes");
        }
        return v;
    }

    String subject(String option, String name) {
        if (!SubjectRegistry.names().contains(name)) {
            throw bad(option, name, "use one of " + String.join(", ", SubjectRegistry.names()));
        }
        return name;
    }

    /** "10us", "10µs", "500ns", "1ms", "0.5ms", or a bare number of microseconds; > 0. */
    long bound(String option, String s) {
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
        double v;
        try {
            v = Double.parseDouble(t.trim());
        } catch (NumberFormatException e) {
            throw bad(option, s, "use a duration such as 10us, 500ns or 1ms");
        }
        long ns = Math.round(v * mult);
        if (!(v > 0) || ns < 1 || ns > 10_000_000_000L) {
            throw bad(option, s, "use a duration greater than 0 and at most 10 s, such as 10us, 500ns or 1ms");
        }
        return ns;
    }

    /** An output folder: created now, so a folder that cannot be made fails before any work. */
    Path folder(String option, Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException | RuntimeException e) {
            throw bad(option, dir, "cannot create that folder (" + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); give a writable folder");
        }
        if (!Files.isWritable(dir)) {
            throw bad(option, dir, "that folder is not writable; give a writable folder");
        }
        return dir;
    }

    /** An existing, writable folder (queue files go there). */
    String existingFolder(String option, String dir) {
        Path p = Path.of(dir);
        if (!Files.isDirectory(p) || !Files.isWritable(p)) {
            throw bad(option, dir, "give an existing, writable folder");
        }
        return dir;
    }

    /** A java executable. */
    String java(String option, String path) {
        Path p = Path.of(path);
        if (!Files.isRegularFile(p) || !Files.isExecutable(p)) {
            throw bad(option, path, "give the path of a java executable, e.g. /usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
        }
        return path;
    }

    List<Integer> ladder(List<Integer> us) {
        for (int u : us) {
            if (u < 1 || u > 10_000_000) {
                throw bad("--ladder", u, "use bounds in microseconds from 1 to 10000000");
            }
        }
        return us;
    }
}
