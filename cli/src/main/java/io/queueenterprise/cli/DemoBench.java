package io.queueenterprise.cli;

import io.aeron.CncFileDescriptor;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The last step of {@code bin/qe demo}: the quick benchmark ({@code bin/qe bench --profile quick}, a second process
 * with the bench module's classpath, given here as a command line). Its results go to stdout and its progress lines
 * to stderr as it prints them; exceptions and their stack traces on its stderr are held back. A benchmark that cannot measure (a loaded machine: a subject JVM that does not answer, Aeron
 * timeouts) does not fail the demo, whose own checks passed: ONE line says what could not be measured and why,
 * without stack traces, and the exit status is 0. However it ends (a signal included) the benchmark's processes are
 * stopped and its files removed: its queue directory (given as {@code --queue-dir}) and the Aeron directories that
 * appeared while it ran and whose driver's process is gone (a subject JVM stopped on a timeout or a signal cannot
 * remove its own): its UDP subjects' and replication nodes' in shared memory, remote clients' in the temporary area.
 */
public final class DemoBench {
    /** The quick profile takes under 2 minutes on 2 cores; far longer means it will not finish. */
    static final Duration LIMIT = Duration.ofMinutes(15);
    private static final Path SHARED_MEMORY = Path.of("/dev/shm");
    /**
     * Where the benchmark's subjects put Aeron directories, and their names: its own UDP subjects ({@code qe-bench-}),
     * the replication nodes of its replicated subjects ({@code qe-aeron-}) in shared memory; remote clients
     * ({@code qe-client-}) in the temporary area.
     */
    private static final List<String> SHARED_MEMORY_PREFIXES = List.of("qe-bench-", "qe-aeron-");
    private static final Path TEMPORARY = Path.of(System.getProperty("java.io.tmpdir"));
    private static final List<String> TEMPORARY_PREFIXES = List.of("qe-client-");
    private static final int MAX_HELD_LINES = 2_000;
    /** "java.io.IOException: ..." or "io.aeron.exceptions.AeronException: ..." at the start of a line. */
    private static final Pattern EXCEPTION = Pattern.compile("^(?:Exception in thread \"[^\"]*\" )?((?:[a-zA-Z_$][\\w$]*\\.)+[\\w$]*(?:Exception|Error|Throwable))(?:: (.*))?$");
    private static final Pattern CLASS_PREFIX = Pattern.compile("(?:[a-zA-Z_$][\\w$]*\\.)+[\\w$]*(?:Exception|Error): ");

    private DemoBench() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length == 0) {
            System.err.println("DemoBench: give the benchmark's command line");
            System.exit(2);
        }
        System.exit(run(List.of(args), System.out, System.err, LIMIT));
    }

    /** Runs {@code command} plus {@code --queue-dir DIR}; 0 unless a signal stopped it (then 128 + the signal). */
    static int run(List<String> command, PrintStream out, PrintStream err, Duration limit) throws InterruptedException {
        Path queueDirectory;
        try {
            queueDirectory = Files.createTempDirectory(Files.isDirectory(SHARED_MEMORY) ? SHARED_MEMORY
                    : Path.of(System.getProperty("java.io.tmpdir")), "qe-demo-bench-");
        } catch (IOException e) {
            out.println("bin/qe: the quick benchmark did not run: no directory for its queues (" + DemoFiles.describe(e) + ")");
            return 0;
        }
        Set<String> before = new HashSet<>(); // what was there already is never touched
        entries(SHARED_MEMORY).forEach(name -> before.add(SHARED_MEMORY.resolve(name).toString()));
        entries(TEMPORARY).forEach(name -> before.add(TEMPORARY.resolve(name).toString()));
        List<String> full = new ArrayList<>(command);
        full.add("--queue-dir");
        full.add(queueDirectory.toString());
        Process bench;
        try {
            bench = new ProcessBuilder(full).redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            removeLeftovers(queueDirectory, before);
            out.println("bin/qe: the quick benchmark did not run: " + DemoFiles.describe(e));
            return 0;
        }
        List<String> held = new ArrayList<>();
        List<String> traces = new ArrayList<>();
        Thread reader = new Thread(() -> hold(bench, err, held, traces), "qe-demo-bench-stderr");
        reader.setDaemon(true);
        reader.start();
        Thread hook = new Thread(() -> {
            stop(bench);
            removeLeftovers(queueDirectory, before);
        }, "qe-demo-bench-cleanup");
        Runtime.getRuntime().addShutdownHook(hook); // SIGINT/SIGTERM: no benchmark process or file outlives this one
        boolean finished = bench.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
        if (!finished) {
            stop(bench);
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        removeLeftovers(queueDirectory, before);
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            return 128 + 15; // shutting down: the hook stops and removes everything
        }
        List<String> lines;
        synchronized (held) {
            lines = List.copyOf(held);
            if (finished && bench.exitValue() == 0) {
                traces.forEach(err::println); // it measured all the same: what it printed is shown, only later
                return 0;
            }
        }
        String why = finished ? reason(lines, bench.exitValue())
                : "it did not finish within " + limit.toMinutes() + " min and was stopped";
        out.println("bin/qe: the quick benchmark could not measure latency on this machine (" + why + "); the demo's"
                + " own checks passed. Run bin/qe bench --profile quick on a quieter machine for numbers.");
        return 0;
    }

    /**
     * Why the benchmark failed, in one phrase: the message of the last exception it printed (its own error comes
     * last, after whatever its subject JVMs printed), without class names, wrappers or stack frames; else its last
     * line of stderr; else its exit status.
     */
    static String reason(List<String> stderr, int exitStatus) {
        String message = null;
        String lastLine = null;
        for (String line : stderr) {
            if (line.isBlank() || line.startsWith("\t") || line.startsWith(" ") || line.startsWith("Caused by:")) {
                continue; // stack frames, "... 12 more", causes: the top-level message says it
            }
            Matcher m = EXCEPTION.matcher(line);
            if (m.matches()) {
                message = m.group(2) == null || m.group(2).isBlank() ? m.group(1).replaceAll(".*\\.", "") : m.group(2);
            }
            lastLine = line;
        }
        String why = message != null ? message : lastLine != null ? lastLine : "it exited with status " + exitStatus;
        // picocli wraps the command's exception: "Error while calling command (...): java.io.IOException: ..."
        Matcher nested = CLASS_PREFIX.matcher(why);
        int end = -1;
        while (nested.find()) {
            end = nested.end();
        }
        if (end > 0) {
            why = why.substring(end);
        }
        why = why.strip();
        return why.length() > 300 ? why.substring(0, 297) + "..." : why;
    }

    /** Passes the benchmark's progress lines on as they come; holds every line (for {@link #reason}) and the traces. */
    private static void hold(Process bench, PrintStream err, List<String> held, List<String> traces) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(bench.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (held) {
                    add(held, line);
                    if (isTrace(line)) {
                        add(traces, line);
                    } else {
                        err.println(line);
                    }
                }
            }
        } catch (IOException e) {
            // the benchmark is gone
        }
    }

    private static void add(List<String> lines, String line) {
        if (lines.size() == MAX_HELD_LINES) {
            lines.remove(0); // the end says why it failed
        }
        lines.add(line);
    }

    /** An exception's first line or a line of its stack trace (a frame, a cause, "... 8 more"). */
    static boolean isTrace(String line) {
        String t = line.stripLeading();
        return t.startsWith("at ") || t.startsWith("Caused by:") || t.startsWith("Suppressed:") || t.matches("\\.\\.\\. \\d+ more")
                || EXCEPTION.matcher(line).matches() || CLASS_PREFIX.matcher(line).find();
    }

    /** SIGTERM to the benchmark and its subject JVMs, SIGKILL to any still running 10 s later. */
    private static void stop(Process bench) {
        List<ProcessHandle> all = new ArrayList<>(bench.descendants().toList()); // before it dies: then they are orphans
        all.add(bench.toHandle());
        all.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle p : all) {
            try {
                p.onExit().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * The benchmark's queue directory, and every Aeron directory that appeared in shared memory while it ran and
     * whose media driver's process is gone (a subject JVM killed on a timeout cannot remove its own).
     */
    private static void removeLeftovers(Path queueDirectory, Set<String> before) {
        try {
            DemoFiles.deleteRecursively(queueDirectory);
        } catch (IOException e) {
            System.err.println("bin/qe: cannot remove the benchmark's queue directory: " + DemoFiles.describe(e));
        }
        removeLeftAeronDirectories(SHARED_MEMORY, SHARED_MEMORY_PREFIXES, before);
        removeLeftAeronDirectories(TEMPORARY, TEMPORARY_PREFIXES, before);
    }

    private static void removeLeftAeronDirectories(Path area, List<String> prefixes, Set<String> before) {
        for (String name : entries(area)) {
            Path dir = area.resolve(name);
            if (!before.contains(dir.toString()) && prefixes.stream().anyMatch(name::startsWith) && driverGone(dir)) {
                try {
                    DemoFiles.deleteRecursively(dir);
                } catch (IOException e) {
                    System.err.println("bin/qe: cannot remove " + dir + ": " + DemoFiles.describe(e));
                }
            }
        }
    }

    /** Whether {@code dir} is an Aeron directory whose driver's process no longer runs. */
    static boolean driverGone(Path dir) {
        Path cnc = dir.resolve(CncFileDescriptor.CNC_FILE);
        if (!Files.isRegularFile(cnc)) {
            return false; // not an Aeron directory (or not yet one): not ours to judge
        }
        try (FileChannel channel = FileChannel.open(cnc)) {
            ByteBuffer pid = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            if (channel.read(pid, CncFileDescriptor.PID_FIELD_OFFSET) != Long.BYTES) {
                return false;
            }
            return ProcessHandle.of(pid.getLong(0)).map(p -> !p.isAlive()).orElse(true);
        } catch (IOException e) {
            return false;
        }
    }

    /** The names of the entries in {@code area}; none when it cannot be listed. */
    private static List<String> entries(Path area) {
        if (!Files.isDirectory(area)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(area)) {
            return entries.map(p -> p.getFileName().toString()).toList();
        } catch (IOException e) {
            return List.of();
        }
    }
}
