package io.queueenterprise.replication.history;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the independent linearizability check ({@code tools/linearizability}: Porcupine against an append-only log
 * model) on a history file. The checker is a Go binary that {@code tools/linearizability/build.sh} builds once and
 * caches; the first call in a fresh machine's run builds it (the Go module proxy is needed then).
 */
public final class LinearizabilityChecker {
    /** What the checker said: its exit status and its output. 0 linearizable, 1 not, 2 unreadable, 3 undecided. */
    public record Verdict(int exitStatus, String output) {
        public boolean linearizable() {
            return exitStatus == 0;
        }
    }

    private LinearizabilityChecker() {
    }

    /** Checks {@code history}; writes Porcupine's visualisation to {@code html} when it is not linearizable. */
    public static Verdict check(Path history, Path html) throws IOException, InterruptedException {
        Path binary = Path.of(run(List.of("bash", projectRoot().resolve("tools/linearizability/build.sh").toString()), 600)
            .output().strip());
        return run(List.of(binary.toString(), "-timeout", "120s", "-html", html.toString(), history.toString()), 180);
    }

    /** The repository root: the project's one JVM flag file ({@code qe.jvm.args.file}) lies in its {@code bin/}. */
    private static Path projectRoot() {
        String flags = System.getProperty("qe.jvm.args.file");
        if (flags == null) {
            throw new IllegalStateException("qe.jvm.args.file is not set: run through Maven, which sets it");
        }
        return Path.of(flags).toAbsolutePath().getParent().getParent();
    }

    private static Verdict run(List<String> command, long seconds) throws IOException, InterruptedException {
        Path out = Files.createTempFile("qe-linearizability-", ".out");
        try {
            Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectOutput(out.toFile()).start();
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                throw new IOException(command.get(0) + " did not finish within " + seconds + " s");
            }
            Verdict verdict = new Verdict(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
            if (command.get(0).equals("bash") && verdict.exitStatus() != 0) {
                throw new IOException("could not build the linearizability checker (" + command + "): exit " + verdict.exitStatus());
            }
            return verdict;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
