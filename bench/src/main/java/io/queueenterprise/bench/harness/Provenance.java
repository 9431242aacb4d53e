package io.queueenterprise.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where a result came from: the source (git commit and whether the work tree had uncommitted
 * changes) and the exact invocation.
 *
 * @param gitCommit       {@code git rev-parse HEAD} of the tree the classes were built from, or "unknown"
 * @param gitDirty        uncommitted changes to tracked files ({@code git status --porcelain -uno}); null if unknown
 * @param command         the command as typed ({@code bin/qe bench --profile quick ...})
 * @param javaCommandLine the JVM's own command line as the OS reports it
 */
public record Provenance(String gitCommit, Boolean gitDirty, String command, String javaCommandLine) {

    /** Looks up git from the working directory (bin/qe runs from anywhere; the tree is found by git itself). */
    public static Provenance of(String command) {
        Path root = sourceRoot();
        String commit = git(root, "rev-parse", "HEAD");
        String status = git(root, "status", "--porcelain", "-uno");
        return new Provenance(commit == null ? "unknown" : commit, status == null ? null : !status.isEmpty(),
                command, ProcessHandle.current().info().commandLine().orElse("unknown"));
    }

    /** The directory of the flag file (bin/jvm.args sits in the tree), else the working directory. */
    private static Path sourceRoot() {
        String argsFile = System.getProperty("qe.jvm.args.file");
        if (argsFile != null && Path.of(argsFile).getParent() != null) {
            return Path.of(argsFile).toAbsolutePath().getParent();
        }
        return Path.of("").toAbsolutePath();
    }

    private static String git(Path dir, String... args) {
        try {
            List<String> cmd = new java.util.ArrayList<>(List.of("git", "-C", dir.toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            return new String(out, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
