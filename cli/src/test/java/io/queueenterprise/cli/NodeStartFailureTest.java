package io.queueenterprise.cli;

import io.queueenterprise.replication.ReplicationNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real {@code qe node} process whose replication, admin or metrics port another process holds: one line on stderr
 * naming the port, exit code 1 within seconds, and nothing left behind (no media-driver directory, no process).
 */
@org.junit.jupiter.api.Tag("process")
class NodeStartFailureTest {
    /** Generous: the failure itself takes a second or two; a loaded machine may take longer to start a JVM. */
    private static final long EXIT_WITHIN_SECONDS = 30;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aTakenReplicationPortIsOneLineNamingItAndTheNodeExitsLeavingNothing() throws Exception {
        Node node = node();
        try (DatagramSocket holder = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), node.port("replicationPort")))) {
            assertStartFails(node, "replication port udp 127.0.0.1:" + holder.getLocalPort() + " is in use");
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aTakenAdminPortIsOneLineNamingItAndTheNodeExitsLeavingNothing() throws Exception {
        Node node = node();
        try (ServerSocket holder = new ServerSocket()) {
            holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), node.port("admin")));
            assertStartFails(node, "admin port tcp 127.0.0.1:" + holder.getLocalPort() + " is in use");
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aTakenMetricsPortIsOneLineNamingItAndTheNodeExitsLeavingNothing() throws Exception {
        Node node = node();
        try (ServerSocket holder = new ServerSocket()) {
            holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), node.port("metrics")));
            assertStartFails(node, "metrics port tcp 127.0.0.1:" + holder.getLocalPort() + " is in use");
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aDataDirectoryThatCannotBeCreatedIsOneLineNamingIt() throws Exception {
        Node node = node();
        Path aFile = Files.writeString(tmp.resolve("a-file"), "not a directory");
        Path config = Files.writeString(tmp.resolve("below-a-file.yaml"),
                node.yaml().replace("dataDirectory: " + node.dataDirectory(), "dataDirectory: " + aFile.resolve("data")));
        QeRun run = QeRun.qe("node", "--config", config.toString());
        assertEquals(1, run.exitCode(), run.err());
        assertEquals(List.of("qe node: replica-0 could not start: data directory " + aFile.resolve("data") + " cannot be prepared: "
                + aFile.resolve("data") + ": Not a directory"), run.err().lines().toList());
    }

    /** One replica's configuration as {@code qe demo} writes it (free loopback ports), not started. */
    private Node node() throws IOException {
        Path root = tmp.resolve("cluster");
        LocalCluster cluster = new LocalCluster(root, List.of("127.0.0.1"), true,
                List.of(new LocalCluster.Queue("orders", "FAST_DAILY", "NONE", "ASYNC", "5s")), "SLEEPING", LocalCluster::launchHere);
        return new Node(cluster.config(0), cluster.dataDirectory(0), Files.readString(cluster.config(0)));
    }

    private record Node(Path config, Path dataDirectory, String yaml) {
        int port(String section) {
            Pattern pattern = section.equals("replicationPort") ? Pattern.compile("replicationPort: (\\d+)")
                    : Pattern.compile("(?s)" + section + ":\\n  bindAddress: [^\\n]+\\n  port: (\\d+)");
            Matcher m = pattern.matcher(yaml);
            assertTrue(m.find(), section + " in\n" + yaml);
            return Integer.parseInt(m.group(1));
        }
    }

    private void assertStartFails(Node node, String expected) throws Exception {
        Path stdout = tmp.resolve("node.out");
        Path stderr = tmp.resolve("node.err");
        Process process = new ProcessBuilder(LocalCluster.qeCommand("node", "--config", node.config().toString()))
                .redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        Path aeronDirectory = ReplicationNode.aeronDirectoryOf("replica-0", node.dataDirectory());
        try {
            boolean exited = process.waitFor(EXIT_WITHIN_SECONDS, TimeUnit.SECONDS);
            String err = Files.readString(stderr, StandardCharsets.UTF_8);
            assertTrue(exited, "still running after " + EXIT_WITHIN_SECONDS + " s; stderr so far:\n" + err);
            assertEquals(1, process.exitValue(), err);
            List<String> lines = err.lines().toList();
            assertEquals(1, lines.size(), "exactly one line on stderr:\n" + err);
            assertTrue(lines.get(0).startsWith("qe node: replica-0 could not start: "), err);
            assertTrue(lines.get(0).contains(expected), "names the port: " + err);
            assertFalse(err.contains("Exception"), "no stack trace: " + err);
            assertFalse(Files.readString(stdout).contains("started"), Files.readString(stdout));
            assertFalse(Files.exists(aeronDirectory), "the media driver's directory was removed: " + aeronDirectory);
            assertFalse(process.isAlive());
        } finally {
            if (process.isAlive()) { // the old behaviour: never exits
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
            ReplicationNode.removeLeftAeronDirectory("replica-0", node.dataDirectory());
        }
    }
}
