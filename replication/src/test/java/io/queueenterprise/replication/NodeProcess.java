package io.queueenterprise.replication;

import io.queueenterprise.replication.config.NodeConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The test's handle on a node child JVM: start, command, SIGKILL by PID, always cleaned up. */
final class NodeProcess implements AutoCloseable {
    final int position;
    private final Process process;
    /** Whose media driver directory to remove here when the child was killed and never closed it. */
    private final String nodeId;
    private final Path dataDirectory;
    private final BufferedReader out;
    private final PrintWriter in;

    /** The last status line's fields. */
    record Status(String role, long term, long lastIndex, long quorumIndex, String state) {
    }

    private NodeProcess(int position, Process process, NodeConfig config) {
        this.position = position;
        this.process = process;
        this.nodeId = config.nodeId();
        this.dataDirectory = config.dataDirectory();
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    static NodeProcess start(TestCluster cluster, int position, String queueSpec, Path log) throws IOException {
        return start(cluster, position, queueSpec, log, List.of());
    }

    /** @param jvmOptions further options for the node's JVM (test-only system properties) */
    static NodeProcess start(TestCluster cluster, int position, String queueSpec, Path log, List<String> jvmOptions) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("@" + System.getProperty("qe.jvm.args.file"));
        command.add("-Xmx256m");
        command.addAll(jvmOptions);
        // base64 public keys hold no comma: the node's own identity key file and every replica's public key
        command.add("-Dqe.test.identityKeyFile=" + cluster.identityKeyFile(position));
        command.add("-Dqe.test.identityKeys=" + String.join(",", cluster.peers.stream().map(p -> p.identityKey()).toList()));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(NodeProcessMain.class.getName());
        command.add(cluster.dataDirectory(position).toString());
        command.add(cluster.credential.toString());
        command.add(Integer.toString(position));
        StringBuilder peers = new StringBuilder();
        for (var p : cluster.peers) {
            peers.append(peers.length() == 0 ? "" : ",").append(p.id()).append(':').append(p.replicationPort());
            if (p.clientPort() != 0) {
                peers.append(':').append(p.clientPort());
            }
        }
        command.add(peers.toString());
        command.add(queueSpec);
        if (cluster.clientCredential != null) {
            command.add(cluster.clientCredential.toString());
            command.add(cluster.writeKeyDirectory.toString());
        }
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        NodeProcess node = new NodeProcess(position, process, cluster.config(position));
        String ready = node.out.readLine();
        if (!"READY".equals(ready)) {
            node.kill();
            String text = Files.exists(log) ? Files.readString(log) : "";
            throw new IllegalStateException("node " + position + " did not start: " + ready + "; its log ends:\n"
                    + text.substring(Math.max(0, text.length() - 4000)));
        }
        return node;
    }

    /** Sends one command and returns its status, or throws with the node's refusal. */
    synchronized Status command(String command) throws IOException {
        in.println(command);
        String line = out.readLine();
        if (line == null || !line.startsWith("OK ")) {
            throw new IllegalStateException("node " + position + " answered '" + line + "' to '" + command + "'");
        }
        String[] f = line.split(" ");
        return new Status(f[1], Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), f[5]);
    }

    Status status() throws IOException {
        return command("status");
    }

    /** The last index the node reports, {@link Long#MIN_VALUE} while it does not answer (starting, stopped, killed). */
    long lastIndexOrUnknown() {
        try {
            return status().lastIndex();
        } catch (Exception notAnswering) {
            return Long.MIN_VALUE;
        }
    }

    /** Every node {@code LIVE} at the leader's last index (false while any of them does not answer). */
    static boolean converged(NodeProcess[] nodes, NodeProcess leader) {
        try {
            Status l = leader.status();
            for (NodeProcess n : nodes) {
                Status s = n.status();
                if (s.lastIndex() != l.lastIndex() || !"LIVE".equals(s.state())) {
                    return false;
                }
            }
            return true;
        } catch (Exception notAnswering) {
            return false;
        }
    }

    /** The node's status as the admin endpoint's JSON (the child serialises {@code ReplicationNode.status()}). */
    synchronized com.fasterxml.jackson.databind.JsonNode statusJson() throws IOException {
        in.println("json");
        String line = out.readLine();
        if (line == null || !line.startsWith("JSON ")) {
            throw new IllegalStateException("node " + position + " answered '" + line + "' to 'json'");
        }
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(line.substring("JSON ".length()));
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL (destroyForcibly on Linux) by PID; waits for the exit. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGSTOP / SIGCONT by PID: a frozen process (a long GC pause, a partition) that later resumes. */
    void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
        }
    }

    int exitValue() {
        return process.exitValue();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            in.println("exit");
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    kill();
                }
            } catch (InterruptedException e) {
                kill();
                Thread.currentThread().interrupt();
            }
        }
        if (!process.isAlive()) {
            // a child killed outright leaves its driver's shared memory behind (tens of MiB of /dev/shm)
            ReplicationNode.removeLeftAeronDirectory(nodeId, dataDirectory);
        }
    }
}
