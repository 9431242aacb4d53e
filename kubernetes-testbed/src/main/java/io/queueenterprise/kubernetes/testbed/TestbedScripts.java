package io.queueenterprise.kubernetes.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the bash scripts in the repository's {@code kubernetes/} folder, which do all provisioning
 * and process management (so a person at a shell and the tests share one implementation). Their
 * stderr is appended to one log file; a failing script's exception quotes that log's tail.
 */
final class TestbedScripts {
    private static final int LOG_TAIL_LINES = 30;

    private final Path directory;
    private final Path log;
    private final Map<String, String> environment;

    TestbedScripts(Path directory, Path log, Map<String, String> environment) {
        this.directory = directory;
        this.log = log;
        this.environment = Map.copyOf(environment);
    }

    Path log() {
        return log;
    }

    /** Runs a script to completion and returns its stdout; throws when it fails or overruns. */
    String run(long timeout, TimeUnit unit, String script, String... args) {
        Result result = start(timeout, unit, script, args);
        if (result.exitCode != 0) {
            throw new TestbedException("kubernetes/" + script + " " + String.join(" ", args) + " exited with "
                + result.exitCode + "; last lines of " + log + ":\n" + tail());
        }
        return result.stdout;
    }

    /** {@code KEY=VALUE} lines of a script's stdout, in order. */
    static Map<String, String> keyValues(String stdout) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : stdout.split("\n")) {
            int equals = line.indexOf('=');
            if (equals > 0) {
                values.put(line.substring(0, equals), line.substring(equals + 1));
            }
        }
        return values;
    }

    private record Result(int exitCode, String stdout) {
    }

    private Result start(long timeout, TimeUnit unit, String script, String... args) {
        List<String> command = new ArrayList<>();
        command.add("bash");
        command.add(directory.resolve(script).toString());
        command.addAll(List.of(args));
        Path stdout = null;
        try {
            Files.createDirectories(log.getParent());
            stdout = Files.createTempFile(log.getParent(), script, ".out");
            ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(stdout.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(environment);
            Process process = builder.start();
            if (!process.waitFor(timeout, unit)) {
                process.descendants().forEach(ProcessHandle::destroy);
                process.destroy();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new TestbedException("kubernetes/" + script + " ran longer than " + timeout + " " + unit
                    + "; stopped it. Last lines of " + log + ":\n" + tail());
            }
            return new Result(process.exitValue(), Files.readString(stdout, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new TestbedException("cannot run kubernetes/" + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TestbedException("interrupted while running kubernetes/" + script, e);
        } finally {
            if (stdout != null) {
                try {
                    Files.deleteIfExists(stdout);
                } catch (IOException ignored) {
                    // a leftover temp file in target/ is harmless
                }
            }
        }
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "(log unreadable: " + e.getMessage() + ")";
        }
    }
}
