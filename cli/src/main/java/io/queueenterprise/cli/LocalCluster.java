package io.queueenterprise.cli;

import io.queueenterprise.replication.ReplicationNode;

import io.queueenterprise.replication.LoopbackPorts;

import io.queueenterprise.replication.node.AdminClient;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Replicas of one cluster as separate {@code qe node} processes, each with the configuration document the operator
 * would render (written to {@code <root>/replica-<i>/node.yaml}), one peer credential and one admin token for all,
 * and its data in {@code <root>/replica-<i>/data}. Processes are started through a {@link Launcher} (plainly on
 * this host, or inside a network namespace), killed with SIGKILL or stopped with SIGTERM by their PID.
 * Used by {@code qe demo} and by the multi-process tests.
 */
final class LocalCluster implements AutoCloseable {
    /** Starts {@code command} for replica {@code replica} with output appended to {@code log}. */
    interface Launcher {
        Process launch(int replica, List<String> command, Path log) throws IOException;
    }

    /** One queue every replica hosts (the YAML's {@code queues[]} entry). */
    record Queue(String name, String rollCycle, String encryption, String ackMode, String ackTimeout) {
    }

    private static final long START_TIMEOUT_SECONDS = 90;

    private final Path root;
    private final List<String> hosts;
    private final List<Integer> replicationPorts = new ArrayList<>();
    private final List<Integer> adminPorts = new ArrayList<>();
    private final Process[] processes;
    private final Launcher launcher;
    private final Path tokenFile;
    /** Each replica's remote-client port; empty when the cluster takes no remote clients. */
    private final List<Integer> clientPorts = new ArrayList<>();
    private final Path clientCredential;
    /** Set by {@link #close()} (the demo's shutdown hook may call it while the main thread starts a replica). */
    private boolean closed;

    /**
     * @param hosts the address each replica listens on and is reached at (one per replica); with
     *              {@code sameHost}, ports are picked free on this host, else fixed (each replica has its own
     *              network namespace)
     */
    LocalCluster(Path root, List<String> hosts, boolean sameHost, List<Queue> queues, String idleStrategy, Launcher launcher)
            throws IOException {
        this(root, hosts, sameHost, queues, idleStrategy, launcher, false);
    }

    /** As above; with {@code serveClients}, every replica also takes remote clients (a client port, a client credential). */
    LocalCluster(Path root, List<String> hosts, boolean sameHost, List<Queue> queues, String idleStrategy, Launcher launcher,
                 boolean serveClients) throws IOException {
        this.root = root;
        this.hosts = List.copyOf(hosts);
        this.launcher = launcher;
        this.processes = new Process[hosts.size()];
        Files.createDirectories(root);
        Path credential = root.resolve("peer-credential");
        byte[] secret = new byte[32];
        SecureRandom random = new SecureRandom();
        random.nextBytes(secret);
        writeOwnerOnly(credential, secret);
        byte[] token = new byte[24];
        random.nextBytes(token);
        tokenFile = root.resolve("admin-token");
        writeOwnerOnly(tokenFile, HexFormat.of().formatHex(token).getBytes(StandardCharsets.US_ASCII));
        List<Integer> metricsPorts = new ArrayList<>();
        Set<Integer> taken = new HashSet<>(); // one host: every port distinct, as the configuration requires
        for (int i = 0; i < hosts.size(); i++) {
            replicationPorts.add(sameHost ? freePort(taken, true) : 40100);
            adminPorts.add(sameHost ? freePort(taken, false) : 40190);
            metricsPorts.add(sameHost ? freePort(taken, false) : 40191);
            if (serveClients) {
                clientPorts.add(sameHost ? freePort(taken, true) : 40120);
            }
        }
        if (serveClients) {
            clientCredential = root.resolve("client-credential");
            byte[] clientSecret = new byte[32];
            random.nextBytes(clientSecret);
            writeOwnerOnly(clientCredential, clientSecret);
        } else {
            clientCredential = null;
        }
        List<String> identityKeys = new ArrayList<>(); // each replica its own identity key; every config names all public keys
        for (int i = 0; i < hosts.size(); i++) {
            try (io.queueenterprise.crypto.IdentityKey identity = io.queueenterprise.crypto.IdentityKey.generate(random)) {
                Files.createDirectories(identityKeyFile(i).getParent());
                writeOwnerOnly(identityKeyFile(i), identity.seedHex().getBytes(StandardCharsets.US_ASCII));
                identityKeys.add(identity.publicKeyText());
            }
        }
        for (int i = 0; i < hosts.size(); i++) {
            StringBuilder yaml = new StringBuilder();
            yaml.append("# Written by qe (LocalCluster): replica ").append(i).append(" of ").append(hosts.size())
                    .append(". Schema: docs/node-config.md\n");
            yaml.append("version: 1\nnodeId: ").append(nodeId(i)).append('\n');
            yaml.append("dataDirectory: ").append(dataDirectory(i)).append('\n');
            yaml.append("peers:\n");
            for (int p = 0; p < hosts.size(); p++) {
                yaml.append("  - id: ").append(nodeId(p)).append("\n    host: ").append(hosts.get(p))
                        .append("\n    replicationPort: ").append(replicationPorts.get(p)).append('\n');
                if (clientCredential != null) {
                    yaml.append("    clientPort: ").append(clientPorts.get(p)).append('\n');
                }
                yaml.append("    identityKey: ").append(identityKeys.get(p)).append('\n');
            }
            yaml.append("peerCredentialFile: ").append(credential).append('\n');
            yaml.append("identityKeyFile: ").append(identityKeyFile(i)).append('\n');
            if (clientCredential != null) {
                yaml.append("clientCredentialFile: ").append(clientCredential).append('\n');
                yaml.append("writeKeyDirectory: ").append(writeKeyDirectory()).append('\n');
            }
            yaml.append("queues:\n");
            for (Queue q : queues) {
                yaml.append("  - name: ").append(q.name()).append("\n    rollCycle: ").append(q.rollCycle())
                        .append("\n    encryption: ").append(q.encryption()).append("\n    ackMode: ").append(q.ackMode())
                        .append("\n    ackTimeout: ").append(q.ackTimeout()).append('\n');
            }
            yaml.append("admin:\n  bindAddress: ").append(hosts.get(i)).append("\n  port: ").append(adminPorts.get(i))
                    .append("\n  credentialFile: ").append(tokenFile).append('\n');
            yaml.append("metrics:\n  bindAddress: ").append(hosts.get(i)).append("\n  port: ").append(metricsPorts.get(i)).append('\n');
            yaml.append("idleStrategy: ").append(idleStrategy).append('\n');
            Files.createDirectories(config(i).getParent());
            Files.writeString(config(i), yaml);
        }
    }

    /** Replica {@code i}'s own identity key (no other replica's configuration names the file). */
    Path identityKeyFile(int i) {
        return config(i).getParent().resolve("identity.key");
    }

    int size() {
        return hosts.size();
    }

    static String nodeId(int replica) {
        return "replica-" + replica;
    }

    Path config(int replica) {
        return root.resolve(nodeId(replica)).resolve("node.yaml");
    }

    Path dataDirectory(int replica) {
        return root.resolve(nodeId(replica)).resolve("data");
    }

    Path queueDirectory(int replica, String queue) {
        return dataDirectory(replica).resolve(queue);
    }

    Path log(int replica) {
        return root.resolve(nodeId(replica)).resolve("node.log");
    }

    Path tokenFile() {
        return tokenFile;
    }

    /** host:port where replica {@code replica} takes remote clients (a cluster built with {@code serveClients}). */
    String clientAddress(int replica) {
        return hosts.get(replica) + ":" + clientPorts.get(replica);
    }

    /** The cluster's client credential file; null when it takes no remote clients. */
    /** Where the nodes read the queues' write keys (docs/remote-clients.md, "Who may write"). */
    Path writeKeyDirectory() {
        return root.resolve("write-keys");
    }

    /**
     * As an operator does for a key holder: gives the nodes {@code queue}'s write key of every master key in
     * {@code keyDirectory} (derived one way from each; the nodes still hold no data key).
     */
    void authoriseWriters(String queue, Path keyDirectory) throws IOException {
        Path folder = Files.createDirectories(writeKeyDirectory());
        Files.setPosixFilePermissions(folder, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        io.queueenterprise.crypto.KeyRing ring = io.queueenterprise.crypto.KeyRingSource.read(keyDirectory);
        for (int id : ring.keyIds()) {
            Path file = folder.resolve(queue + "." + id + ".key");
            Files.deleteIfExists(file);
            byte[] key = io.queueenterprise.crypto.WriteKeys.derive(ring.key(id), queue);
            writeOwnerOnly(file, HexFormat.of().formatHex(key).getBytes(StandardCharsets.US_ASCII));
            java.util.Arrays.fill(key, (byte) 0);
        }
    }

    Path clientCredential() {
        return clientCredential;
    }

    String adminAddress(int replica) {
        return hosts.get(replica) + ":" + adminPorts.get(replica);
    }

    /** A client of the replica's admin endpoint (reachable when the replica's host is reachable from here). */
    AdminClient admin(int replica) throws IOException {
        return new AdminClient(adminAddress(replica), Files.readString(tokenFile, StandardCharsets.US_ASCII));
    }

    /**
     * Waits until the replica, just promoted, acknowledges: its leader lease is held and its term confirmed (a majority
     * follows it, and above term 1 the lease timeout and a margin passed since: docs/replication.md "Leader lease").
     *
     * @throws IllegalStateException when it does not within {@code timeout}
     */
    void awaitAcknowledging(int replica, java.time.Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!admin(replica).status().lease().acknowledging()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(nodeId(replica) + " does not acknowledge after " + timeout
                        + ": " + admin(replica).status().lease());
            }
            Thread.sleep(20);
        }
    }

    boolean running(int replica) {
        return processes[replica] != null && processes[replica].isAlive();
    }

    long pid(int replica) {
        return processes[replica].pid();
    }

    /** Starts replica {@code replica} ({@code qe node --config ...}) and waits until it says it started. */
    void start(int replica) throws IOException, InterruptedException {
        startAll(replica);
    }

    /**
     * Starts the given replicas together and waits until each says it started: their JVMs warm up side by side
     * (about a third of the wall time of starting them one after another, even on 2 cores, since a starting JVM
     * also waits on files and its media driver). A replica that fails to start stops the others begun here.
     */
    void startAll(int... replicas) throws IOException, InterruptedException {
        long[] logged = new long[replicas.length];
        for (int i = 0; i < replicas.length; i++) {
            int replica = replicas[i];
            if (running(replica)) {
                throw new IllegalStateException(nodeId(replica) + " is running");
            }
            logged[i] = Files.exists(log(replica)) ? Files.size(log(replica)) : 0;
        }
        for (int i = 0; i < replicas.length; i++) {
            int replica = replicas[i];
            synchronized (this) { // a close() from another thread either sees this process or prevents it
                if (closed) {
                    killAll(replicas);
                    throw new IOException(this + " is closed: " + nodeId(replica) + " not started");
                }
                processes[replica] = launcher.launch(replica, qeCommand("node", "--config", config(replica).toString()), log(replica));
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        for (int i = 0; i < replicas.length; i++) {
            try {
                awaitStarted(replicas[i], logged[i], deadline);
            } catch (IOException | RuntimeException e) {
                killAll(replicas);
                throw e;
            }
        }
    }

    private void awaitStarted(int replica, long logged, long deadline) throws IOException, InterruptedException {
        while (System.nanoTime() < deadline) {
            String output = Files.exists(log(replica)) ? readFrom(log(replica), logged) : "";
            if (output.contains("qe node: " + nodeId(replica) + " started")) {
                return;
            }
            if (!processes[replica].isAlive()) {
                throw new IOException(nodeId(replica) + " exited with " + processes[replica].exitValue() + ": " + output.strip());
            }
            Thread.sleep(20);
        }
        throw new IOException(nodeId(replica) + " did not start within " + START_TIMEOUT_SECONDS + " s; see " + log(replica));
    }

    private void killAll(int... replicas) throws InterruptedException {
        for (int replica : replicas) {
            kill(replica);
        }
    }

    /** SIGKILL: the process gets no chance to do anything. */
    void kill(int replica) throws InterruptedException {
        Process p = processes[replica];
        if (p != null && p.isAlive()) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            removeLeftAeronDirectory(replica);
        }
    }

    /** A node killed with SIGKILL leaves its media driver's directory (tens of MiB of /dev/shm); removed here. */
    private void removeLeftAeronDirectory(int replica) {
        ReplicationNode.removeLeftAeronDirectory(nodeId(replica), dataDirectory(replica));
    }

    /** SIGTERM and wait: the node's graceful shutdown. Returns the exit code (143 after a clean SIGTERM exit). */
    int stop(int replica) throws InterruptedException {
        Process p = processes[replica];
        if (p == null) {
            return -1;
        }
        if (p.isAlive()) {
            p.destroy();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
        }
        removeLeftAeronDirectory(replica); // none is left after a graceful stop; one is after SIGKILL or a crash
        return p.exitValue();
    }

    /**
     * Stops every replica still running, by PID: SIGTERM to all at once, SIGKILL to any still running a minute later;
     * then removes the Aeron directory (tens of MiB of /dev/shm) any of them left. No replica starts afterwards.
     * Safe to call again and from a shutdown hook.
     */
    @Override
    public void close() {
        Process[] running;
        synchronized (this) {
            closed = true;
            running = processes.clone();
        }
        for (Process p : running) {
            if (p != null && p.isAlive()) {
                p.destroy();
            }
        }
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Process p : running) {
            if (p == null) {
                continue;
            }
            try {
                if (!p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                interrupted = true;
                p.destroyForcibly();
            }
        }
        RuntimeException failure = null;
        for (int i = 0; i < running.length; i++) {
            if (running[i] != null && !running[i].isAlive()) {
                try {
                    removeLeftAeronDirectory(i);
                } catch (RuntimeException e) { // the others' directories are removed all the same
                    failure = failure == null ? e : failure;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** {@code java <this JVM's flags> -cp <this classpath> io.queueenterprise.cli.QeCommand args...}. */
    static List<String> qeCommand(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String argsFile = System.getProperty("qe.jvm.args.file");
        if (argsFile != null) {
            command.add("@" + argsFile);
            command.add("-Dqe.jvm.args.file=" + argsFile);
        } else {
            command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                    .filter(a -> !a.startsWith("-agentlib") && !a.startsWith("-javaagent") && !a.startsWith("-Xmx")).toList());
        }
        command.add("-Xmx512m");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(QeCommand.class.getName());
        command.addAll(List.of(args));
        return command;
    }

    /** Plainly on this host. */
    static Process launchHere(int replica, List<String> command, Path log) throws IOException {
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    }

    private static String readFrom(Path file, long offset) throws IOException {
        byte[] all = Files.readAllBytes(file);
        return new String(all, (int) Math.min(offset, all.length), (int) Math.max(0, all.length - offset), StandardCharsets.UTF_8);
    }

    private static void writeOwnerOnly(Path file, byte[] content) throws IOException {
        Files.write(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    /** A port free now on loopback (bound, then released: the node binds it moments later), not in {@code taken}. */
    private static int freePort(Set<Integer> taken, boolean udp) throws IOException {
        while (true) {
            int port = udp ? LoopbackPorts.freeUdpPort() : LoopbackPorts.freeTcpPort();
            if (taken.add(port)) {
                return port;
            }
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "LocalCluster(%d replicas in %s)", hosts.size(), root);
    }
}
