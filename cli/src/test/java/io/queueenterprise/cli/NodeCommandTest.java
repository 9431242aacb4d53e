package io.queueenterprise.cli;

import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.config.NodeConfigReader;
import io.queueenterprise.replication.node.FakeNodeControl;
import io.queueenterprise.replication.node.QueueNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static io.queueenterprise.cli.QeRun.qe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code qe node ...}: bad usage and bad configurations (exit 2, one line), and the admin subcommands against a
 * real admin endpoint on loopback around a stand-in engine ({@link FakeNodeControl}, the replication module's: role and term by the contract's rules; the engine's
 * behaviour is the engine's tests').
 */
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

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
