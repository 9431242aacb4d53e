package io.queueenterprise.cli;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.config.NodeConfigReader;
import io.queueenterprise.replication.node.FakeNodeControl;
import io.queueenterprise.replication.node.QueueNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.queueenterprise.cli.QeRun.qe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code qe node ...}: bad usage and bad configurations (exit 2, one line), and the admin subcommands against a
 * real admin endpoint on loopback around a stand-in engine ({@link FakeNodeControl}, the replication module's: role and term by the contract's rules; the engine's
 * behaviour is the engine's tests').
 */
@org.junit.jupiter.api.Tag("unit")
class NodeCommandTest {
    static final String TOKEN = "cli-admin-token-0123456789";

    @TempDir
    Path tmp;

    Path examples() {
        return Path.of(System.getProperty("user.dir")).resolve("../examples/node-config").normalize();
    }

    @Test
    void badUsageAndBadConfigurationsAreOneLineAndExitCode2() throws IOException {
        Path badConfig = tmp.resolve("bad.yaml");
        Files.writeString(badConfig, Files.readString(examples().resolve("three-replicas-replica-0.yaml"))
                .replace("ackMode: ASYNC", "ackMode: QUROUM"));
        Path token = Files.writeString(tmp.resolve("token"), TOKEN);
        Object[][] cases = {
                {new String[]{"node"}, "qe node needs --config FILE"},
                {new String[]{"node", "--config", tmp.resolve("missing.yaml").toString()}, "cannot read " + tmp.resolve("missing.yaml") + ": no such file"},
                {new String[]{"node", "--config", badConfig.toString()},
                        "bad.yaml: queues[1].ackMode: \"QUROUM\" is not one of ASYNC, REPLICATED_READS, QUORUM"},
                {new String[]{"node", "status"}, "Missing required options: '--admin=HOST:PORT', '--token-file=FILE'"},
                {new String[]{"node", "status", "--admin", "localhost", "--token-file", token.toString()}, "--admin localhost is not HOST:PORT"},
                {new String[]{"node", "status", "--admin", "localhost:70000", "--token-file", token.toString()}, "--admin localhost:70000 is not HOST:PORT"},
                {new String[]{"node", "status", "--admin", "localhost:1", "--token-file", tmp.resolve("nope").toString()}, "--token-file "},
                {new String[]{"node", "promote", "--term", "0", "--admin", "localhost:1", "--token-file", token.toString()}, "--term must be at least 1, got 0"},
                {new String[]{"node", "promote", "--term", "x", "--admin", "localhost:1", "--token-file", token.toString()}, "Invalid value for option '--term'"},
                {new String[]{"node", "follow", "--term", "3", "--admin", "localhost:1", "--token-file", token.toString()}, "Missing required option: '--leader=ID'"},
        };
        for (Object[] c : cases) {
            String[] args = (String[]) c[0];
            QeRun run = qe(args);
            String what = String.join(" ", args);
            assertEquals(2, run.exitCode(), what + ": " + run.err());
            String firstLine = run.err().lines().findFirst().orElse("");
            assertTrue(firstLine.contains((String) c[1]), what + ": " + firstLine);
            assertFalse(run.err().contains("Exception"), what + ": no stack trace: " + run.err());
        }
    }

    @Test
    void theStatusPrintsTheProblemsTheNodeSurvivedAndNothingWhenThereAreNone() {
        QueueStatus troubled = new QueueStatus("orders", QueueStatus.State.CATCHING_UP, 5, 5, 4, 0, List.of(), 42, 0,
                "its writer has been blocked in the store for 2 s", new QueueStatus.Writer(2_100, 1, "2026-11-23T01:58:10.004Z"),
                new QueueStatus.Resyncs(1, QueueStatus.ResyncCause.WRITER_BEHIND, "its writer has been behind for 101 ms",
                        "2026-11-23T01:58:10.730Z"),
                new QueueStatus.Quarantines(2, QueueStatus.QuarantineReason.DAMAGED, "2026-11-23T01:40:00.017Z",
                        "/data/orders/quarantine/20261123T014000.017Z", 158, "stored excerpt 0x2a does not match"));
        NodeStatus status = new NodeStatus("replica-1", NodeStatus.Role.FOLLOWER, 3, "replica-0", List.of(troubled), "0-1",
                new NodeStatus.Transport(false, "the embedded Aeron client and driver could not be restarted: port taken", 2,
                        "still down after a failed restart", "2026-11-23T01:56:49.120Z"),
                List.of(new NodeStatus.PeerAddress("replica-0", "replica-0.qe", true, null, "host 'replica-0.qe' does not resolve (yet)",
                                "2026-11-23T01:57:02.310Z"),
                        new NodeStatus.PeerAddress("replica-2", "replica-2.qe", false, "host 'replica-2.qe' does not resolve (yet)",
                                "host 'replica-2.qe' does not resolve (yet)", "2026-11-23T01:57:03.000Z")));
        String printed = printed(status);
        for (String expected : List.of(
                "  transport DOWN: the embedded Aeron client and driver could not be restarted: port taken",
                "  transport restarted 2 time(s), last at 2026-11-23T01:56:49.120Z: still down after a failed restart",
                "  peer replica-0 (replica-0.qe) addressable; last problem at 2026-11-23T01:57:02.310Z: host 'replica-0.qe' does not resolve (yet)",
                "  peer replica-2 (replica-2.qe) NOT addressable: host 'replica-2.qe' does not resolve (yet)",
                "    detail: its writer has been blocked in the store for 2 s",
                "    writer: blocked 2,100 ms now; 1 stall(s) of 1 s or more, last at 2026-11-23T01:58:10.004Z",
                "    resyncs: 1, last WRITER_BEHIND at 2026-11-23T01:58:10.730Z: its writer has been behind for 101 ms",
                "    quarantines: 2, newest DAMAGED at 2026-11-23T01:40:00.017Z, 158 excerpts in /data/orders/quarantine/20261123T014000.017Z (stored excerpt 0x2a does not match)")) {
            assertTrue(printed.contains(expected + System.lineSeparator()), () -> "no line '" + expected + "' in:\n" + printed);
        }

        NodeStatus identified = new NodeStatus("replica-1", NodeStatus.Role.FOLLOWER, 3, "replica-0", List.of(), "0-1",
                new NodeStatus.Transport(true, null, 0, null, null),
                List.of(new NodeStatus.PeerAddress("replica-0", "replica-0.qe", true, null, null, null, true, "1a2b3c4d"),
                        new NodeStatus.PeerAddress("replica-2", "replica-2.qe", true, null, null, null, true, null),
                        new NodeStatus.PeerAddress("replica-3", "replica-3.qe", true, null, null, null, false, null)),
                null, new NodeStatus.Identity("AAAA", "9f8e7d6c", true));
        String identities = printed(identified);
        assertTrue(identities.contains("  identity 9f8e7d6c (from its key file); peers: replica-0 pinned, proved 1a2b3c4d,"
                + " replica-2 pinned (no session proved it yet), replica-3 UNPINNED (peer credential only)" + System.lineSeparator()),
                () -> "the identity line:\n" + identities);

        String quiet = printed(new NodeStatus("replica-1", NodeStatus.Role.FOLLOWER, 3, "replica-0", List.of(
                new QueueStatus("orders", QueueStatus.State.LIVE, 5, 5, 5, 0, List.of(), 42, 0))));
        assertEquals(2, quiet.lines().count(), () -> "a node with nothing to report prints its role and the queue only:\n" + quiet);
    }

    private static String printed(NodeStatus status) {
        StringWriter text = new StringWriter();
        NodeCommand.print(new PrintWriter(text), status);
        return text.toString();
    }

    @Test
    void theAdminSubcommandsDriveARunningNode() throws IOException {
        Path token = Files.writeString(tmp.resolve("token"), TOKEN + "\n");
        NodeConfig example = NodeConfigReader.read(examples().resolve("three-replicas-replica-0.yaml"));
        NodeConfig config = new NodeConfig(1, example.nodeId(), tmp.resolve("data"), example.peers(), tmp.resolve("peer"),
                example.queues(), new NodeConfig.Admin("127.0.0.1", 0, token), new NodeConfig.Metrics("127.0.0.1", 0),
                example.idleStrategy());
        try (QueueNode node = QueueNode.start(config, new FakeNodeControl(config), Duration.ofHours(1))) {
            String[] endpoint = {"--admin", "127.0.0.1:" + node.adminPort(), "--token-file", token.toString()};
            QeRun status = qe(concat(new String[]{"node", "status"}, endpoint));
            assertEquals(0, status.exitCode(), status.err());
            assertTrue(status.out().startsWith("replica-0: STANDBY at term 0"), status.out());
            assertTrue(status.out().contains("queue orders: STOPPED, last none"), status.out());

            QeRun promote = qe(concat(new String[]{"node", "promote", "--term", "3"}, endpoint));
            assertEquals(0, promote.exitCode(), promote.err());
            assertTrue(promote.out().startsWith("replica-0: LEADER at term 3, leader replica-0"), promote.out());

            QeRun again = qe(concat(new String[]{"node", "promote", "--term", "3"}, endpoint));
            assertEquals(1, again.exitCode());
            assertTrue(again.err().startsWith("qe node promote: STALE_TERM (HTTP 409): promote: term 3 is stale"), again.err());

            QeRun follow = qe(concat(new String[]{"node", "follow", "--leader", "replica-9", "--term", "4"}, endpoint));
            assertEquals(1, follow.exitCode());
            assertTrue(follow.err().startsWith("qe node follow: UNKNOWN_PEER (HTTP 400)"), follow.err());

            QeRun fence = qe(concat(new String[]{"node", "fence", "--term", "4"}, endpoint));
            assertEquals(0, fence.exitCode(), fence.err());
            assertTrue(fence.out().startsWith("replica-0: FENCED at term 4"), fence.out());

            QeRun json = qe(concat(new String[]{"node", "status", "--json"}, endpoint));
            assertEquals(0, json.exitCode(), json.err());
            assertTrue(json.out().contains("\"role\" : \"FENCED\""), json.out());

            Path wrong = Files.writeString(tmp.resolve("wrong"), "a-wrong-token-of-some-length");
            QeRun refused = qe("node", "status", "--admin", "127.0.0.1:" + node.adminPort(), "--token-file", wrong.toString());
            assertEquals(1, refused.exitCode());
            assertTrue(refused.err().startsWith("qe node status: UNAUTHORIZED (HTTP 401)"), refused.err());
        }
        QeRun unreachable = qe("node", "status", "--admin", "127.0.0.1:1", "--token-file", token.toString());
        assertEquals(1, unreachable.exitCode());
        assertTrue(unreachable.err().startsWith("qe node status: admin endpoint 127.0.0.1:1 did not answer"), unreachable.err());
    }

    @Test
    void aNodeWithoutItsAdminTokenDoesNotStartAndSaysWhy() throws IOException {
        Path config = tmp.resolve("node.yaml");
        Files.writeString(config, Files.readString(examples().resolve("single-node.yaml"))
                .replace("/var/lib/queue-enterprise", tmp.resolve("data").toString())
                .replace("/etc/queue-enterprise", tmp.toString()));
        QeRun run = qe("node", "--config", config.toString());
        assertEquals(1, run.exitCode(), run.out() + run.err());
        assertEquals("qe node: solo could not start: admin.credentialFile " + tmp.resolve("admin/token")
                + " cannot be read: no such file", run.err().strip());
        assertFalse(Files.exists(tmp.resolve("data")), "no engine was started");
    }

    /** The node half of rotating a drawn identity: the key file deleted, once; refused where the node could not redraw. */
    @Test
    void forgetIdentityDeletesOnlyAKeyTheNodeMayDrawAgain() throws Exception {
        String single = Files.readString(examples().resolve("single-node.yaml"))
                .replace("/var/lib/queue-enterprise", tmp.resolve("data").toString())
                .replace("/etc/queue-enterprise", tmp.toString());
        Path key = tmp.resolve("data/identity.key");
        Path drawing = Files.writeString(tmp.resolve("drawing.yaml"), single + "identityKeyFile: " + key + "\ndrawIdentityKeyIfAbsent: true\n");
        Path notDrawing = Files.writeString(tmp.resolve("not-drawing.yaml"), single + "identityKeyFile: " + key + "\n");
        Path none = Files.writeString(tmp.resolve("none.yaml"), single);
        Files.createDirectories(key.getParent(), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        QeRun made = qe("identity", "--name", "node", "--out", tmp.resolve("made").toString());
        assertEquals(0, made.exitCode(), made.err());
        Files.copy(tmp.resolve("made/node.key"), key);
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));

        QeRun refusedNotDrawing = qe("node", "forget-identity", "--config", notDrawing.toString());
        assertEquals(2, refusedNotDrawing.exitCode(), refusedNotDrawing.err());
        assertTrue(refusedNotDrawing.err().contains("does not set drawIdentityKeyIfAbsent: true"), refusedNotDrawing.err());
        QeRun refusedNone = qe("node", "forget-identity", "--config", none.toString());
        assertEquals(2, refusedNone.exitCode(), refusedNone.err());
        assertTrue(refusedNone.err().contains("names no identityKeyFile"), refusedNone.err());
        assertTrue(Files.exists(key), "nothing deleted when refused");

        QeRun forgot = qe("node", "forget-identity", "--config", drawing.toString());
        assertEquals(0, forgot.exitCode(), forgot.err());
        assertTrue(forgot.out().startsWith("deleted " + key + " (identity "), forgot.out());
        assertFalse(Files.exists(key));
        // a key others could replace is deleted all the same (it most needs replacing), saying what was wrong with it
        Files.copy(tmp.resolve("made/node.key"), key);
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        QeRun exposed = qe("node", "forget-identity", "--config", drawing.toString());
        assertEquals(0, exposed.exitCode(), exposed.err());
        assertTrue(exposed.out().startsWith("deleted " + key + " (not a usable key: "), exposed.out());
        assertFalse(Files.exists(key));
        QeRun again = qe("node", "forget-identity", "--config", drawing.toString());
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("no identity key at " + key), again.out());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
