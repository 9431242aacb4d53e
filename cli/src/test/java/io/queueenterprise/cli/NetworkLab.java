package io.queueenterprise.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Network namespaces of a test's own, for fault tests: {@code hosts} namespaces, each with one interface and an
 * address 10.213.0.(i+1)/24 used nowhere else, wired through an {@link ImpairingSwitch} running in a hub namespace
 * of the lab (loss, delay, reordering, duplication, partition per host). Nothing is created or changed in the
 * machine's own namespace: no bridge, no route, no sysctl. Processes started with {@link #start} run inside a host
 * namespace ({@code ip netns exec}: the PID is the command's own) and are stopped by PID.
 *
 * <p>{@link #close()} stops every process it started, the switch, deletes every namespace and checks with
 * {@code ip netns list} that none of this lab's names is left; a shutdown hook does the same if the test JVM dies
 * first; a lab left by a test JVM that was killed outright is removed by the next lab created. Names carry a
 * per-run prefix ({@code qe-lab-<pid>-<n>-}), so that concurrent runs never collide.</p>
 */
final class NetworkLab implements AutoCloseable {
    private static final AtomicInteger LABS = new AtomicInteger();

    private final String prefix;
    private final int hosts;
    private final List<Process> processes = new ArrayList<>();
    private final List<String> namespaces = new ArrayList<>();
    private final Thread shutdownHook;
    private Process switchProcess;
    private PrintWriter switchIn;
    private BufferedReader switchOut;
    private boolean closed;

    private NetworkLab(int hosts) {
        this.hosts = hosts;
        this.prefix = "qe-lab-" + ProcessHandle.current().pid() + "-" + LABS.incrementAndGet() + "-";
        this.shutdownHook = new Thread(this::cleanUp, "network-lab-cleanup");
    }

    /** Why a lab cannot run here (not root, no {@code ip}, no TUN device), or empty when it can. */
    static Optional<String> unavailableReason() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return Optional.of("network namespaces need root; running as " + System.getProperty("user.name"));
        }
        if (!Files.exists(Path.of("/dev/net/tun"))) {
            return Optional.of("no /dev/net/tun (the lab's userspace netem needs TUN devices)");
        }
        if (!commandWorks("ip", "-V")) {
            installIproute2();
            if (!commandWorks("ip", "-V")) {
                return Optional.of("iproute2 (ip) is missing and scripts/install-test-packages.sh iproute2 did not install it");
            }
        }
        return Optional.empty();
    }

    private static void installIproute2() {
        Path script = projectRoot().resolve("scripts/install-test-packages.sh");
        try {
            new ProcessBuilder(script.toString(), "iproute2").inheritIO().start().waitFor(10, TimeUnit.MINUTES);
        } catch (IOException e) {
            // the caller reports that ip is still missing
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Path projectRoot() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no project root above " + System.getProperty("user.dir"));
        }
        return dir;
    }

    /** Creates the namespaces, the switch and the wiring; on any failure removes what it made. */
    static NetworkLab create(int hosts, long seed) throws IOException, InterruptedException {
        if (hosts < 1 || hosts > 200) {
            throw new IllegalArgumentException("hosts " + hosts);
        }
        sweepLabsOfDeadRuns();
        NetworkLab lab = new NetworkLab(hosts);
        Runtime.getRuntime().addShutdownHook(lab.shutdownHook);
        try {
            lab.build(seed);
            return lab;
        } catch (IOException | InterruptedException | RuntimeException e) {
            lab.close();
            throw e;
        }
    }

    /**
     * A test JVM killed with SIGKILL runs no shutdown hook: its lab's namespaces (named with its PID) and the
     * processes it started in them stay. Any lab whose JVM is gone is removed here: its processes (listed by
     * {@code ip netns pids}, started by that run) are killed, then its namespaces deleted.
     */
    private static void sweepLabsOfDeadRuns() throws IOException, InterruptedException {
        Pattern labName = Pattern.compile("qe-lab-(\\d+)-\\d+-(h\\d+|hub)");
        for (String ns : namespaceNames()) {
            Matcher m = labName.matcher(ns);
            if (!m.matches() || ProcessHandle.of(Long.parseLong(m.group(1))).isPresent()) {
                continue;
            }
            Process pids = new ProcessBuilder("ip", "netns", "pids", ns).redirectErrorStream(true).start();
            String out = new String(pids.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            pids.waitFor();
            for (String pid : out.split("\\s+")) {
                if (pid.matches("\\d+")) {
                    ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
            System.err.println("NetworkLab: removing " + ns + ", left by a test run that died (PID " + m.group(1) + ")");
            ip("netns", "del", ns);
        }
    }

    private static List<String> namespaceNames() throws IOException, InterruptedException {
        Process list = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
        String out = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        list.waitFor();
        return out.lines().map(l -> l.split("\\s+")[0]).filter(n -> !n.isEmpty()).toList();
    }

    private void build(long seed) throws IOException, InterruptedException {
        String hub = prefix + "hub";
        addNamespace(hub);
        for (int i = 0; i < hosts; i++) {
            addNamespace(namespace(i));
        }
        List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", hub));
        command.addAll(javaCommand(ImpairingSwitch.class.getName(), Integer.toString(hosts), Long.toString(seed)));
        switchProcess = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        switchIn = new PrintWriter(switchProcess.getOutputStream(), true, StandardCharsets.UTF_8);
        switchOut = new BufferedReader(new InputStreamReader(switchProcess.getInputStream(), StandardCharsets.UTF_8));
        String ready = switchOut.readLine();
        if (!"READY".equals(ready)) {
            throw new IllegalStateException("the lab's switch did not start: " + ready);
        }
        for (int i = 0; i < hosts; i++) {
            String device = "qt" + i;
            ip("-n", hub, "link", "set", device, "netns", namespace(i));
            ip("-n", namespace(i), "addr", "add", address(i) + "/24", "dev", device);
            ip("-n", namespace(i), "link", "set", device, "up");
        }
    }

    private void addNamespace(String name) throws IOException, InterruptedException {
        ip("netns", "add", name);
        namespaces.add(name);
        ip("-n", name, "link", "set", "lo", "up");
    }

    String namespace(int host) {
        return prefix + "h" + host;
    }

    /** The host's address, reachable from the other hosts of this lab only. */
    String address(int host) {
        return "10.213.0." + (host + 1);
    }

    int hosts() {
        return hosts;
    }

    /** Starts {@code command} inside {@code host}'s namespace, output to {@code log}; stopped by {@link #close()}. */
    synchronized Process start(int host, List<String> command, Path log) throws IOException {
        List<String> inNamespace = new ArrayList<>(List.of("ip", "netns", "exec", namespace(host)));
        inNamespace.addAll(command);
        Process process = new ProcessBuilder(inNamespace).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        processes.add(process);
        return process;
    }

    /**
     * Starts {@code command} inside {@code host}'s namespace with its stdin and stdout piped to the caller (a child the
     * test talks to), its stderr to {@code log}; stopped by {@link #close()}.
     */
    synchronized Process startPiped(int host, List<String> command, Path log) throws IOException {
        List<String> inNamespace = new ArrayList<>(List.of("ip", "netns", "exec", namespace(host)));
        inNamespace.addAll(command);
        Process process = new ProcessBuilder(inNamespace).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        processes.add(process);
        return process;
    }

    /** Loss, delay (ms), reordering and duplication of everything {@code host} sends or receives. */
    String impair(int host, double loss, int delayMillis, double reorder, double duplicate) throws IOException {
        return command(String.format(java.util.Locale.ROOT, "impair %d loss=%s delay=%d reorder=%s duplicate=%s",
                host, loss, delayMillis, reorder, duplicate));
    }

    /** Cuts {@code host} off from every other host until {@link #heal()}. */
    String partition(int host) throws IOException {
        return command("partition " + host);
    }

    String heal() throws IOException {
        return command("heal");
    }

    /** The switch's counters: {@code forwarded=.. dropped=.. duplicated=.. reordered=..}. */
    String stats() throws IOException {
        return command("stats");
    }

    private synchronized String command(String line) throws IOException {
        switchIn.println(line);
        String answer = switchOut.readLine();
        if (answer == null || !answer.startsWith("OK")) {
            throw new IllegalStateException("switch refused '" + line + "': " + answer);
        }
        return answer;
    }

    /** The same JVM and flags as this one, this test classpath, {@code mainClass} and its arguments. */
    static List<String> javaCommand(String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String argsFile = System.getProperty("qe.jvm.args.file");
        if (argsFile != null) {
            command.add("@" + argsFile);
        } else {
            command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                    .filter(a -> !a.startsWith("-agentlib") && !a.startsWith("-javaagent")).toList());
        }
        command.add("-Xmx256m");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(List.of(args));
        return command;
    }

    /** Namespace names of this lab that {@code ip netns list} still shows. */
    List<String> leftOver() throws IOException, InterruptedException {
        return namespaceNames().stream().filter(n -> n.startsWith(prefix)).toList();
    }

    @Override
    public void close() {
        cleanUp();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run: nothing to remove
        }
    }

    private synchronized void cleanUp() {
        if (closed) {
            return;
        }
        closed = true;
        for (Process p : processes) {
            stop(p);
        }
        if (switchProcess != null) {
            switchIn.close(); // end of stdin ends the switch
            stop(switchProcess);
        }
        for (String ns : namespaces) {
            try {
                ip("netns", "del", ns);
            } catch (IOException | RuntimeException e) {
                System.err.println("NetworkLab: could not delete namespace " + ns + ": " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** SIGTERM, a few seconds' grace, then SIGKILL; by PID, never by name. */
    static void stop(Process p) {
        if (!p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static boolean commandWorks(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void ip(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
    }
}
