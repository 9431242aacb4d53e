package io.queueenterprise.replication;

import io.queueenterprise.replication.config.NodeConfig;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A replication node as a child JVM for the multi-process tests: started with {@code @bin/jvm.args}, driven by one
 * command per line on stdin ({@code promote T}, {@code follow L T}, {@code fence T}, {@code status}, {@code json}, {@code exit}),
 * answering one line each ({@code OK role term lastIndex quorumIndex state}, {@code JSON <status as the admin endpoint's
 * JSON>} or {@code ERR message}). Killed with
 * SIGKILL by the test.
 *
 * <p>Arguments: data directory, credential file, this node's position, peers as {@code id:port[:clientPort],...}
 * (127.0.0.1, or the name in {@code -Dqe.test.peerHost.<id>}), queue as {@code name:ACKMODE:ROLLCYCLE[:ENCRYPTION]}, and optionally the client credential file
 * (remote clients served on each peer's clientPort). {@code -Dqe.test.leaseTimeoutMs=N} gives the node a leader lease
 * of N ms (none by default, as before the lease existed).
 */
public final class NodeProcessMain {
    private NodeProcessMain() {
    }

    public static void main(String[] args) throws Exception {
        List<NodeConfig.Peer> peers = new ArrayList<>();
        String[] identityKeys = System.getProperty("qe.test.identityKeys").split(",");
        for (String p : args[3].split(",")) {
            String[] parts = p.split(":");
            // -Dqe.test.peerHost.<id>=<name>: this node knows that peer by a host name (name-resolution tests)
            peers.add(new NodeConfig.Peer(parts[0], System.getProperty("qe.test.peerHost." + parts[0], "127.0.0.1"), Integer.parseInt(parts[1]),
                    parts.length > 2 ? Integer.parseInt(parts[2]) : 0, identityKeys[peers.size()]));
        }
        String[] q = args[4].split(":");
        NodeConfig.Encryption encryption = q.length > 3 ? NodeConfig.Encryption.valueOf(q[3]) : NodeConfig.Encryption.NONE;
        NodeConfig.QueueSpec queue = new NodeConfig.QueueSpec(q[0], q[2], encryption, AckMode.valueOf(q[1]),
                Duration.ofSeconds(1), NodeConfig.Retention.unbounded());
        int self = Integer.parseInt(args[2]);
        NodeConfig config = new NodeConfig(NodeConfig.SCHEMA_VERSION, peers.get(self).id(), Path.of(args[0]), peers,
                Path.of(args[1]), List.of(queue), new NodeConfig.Admin("127.0.0.1", 0, Path.of(args[1])),
                new NodeConfig.Metrics("127.0.0.1", 0), NodeConfig.IdleStrategySpec.BACKOFF,
                args.length > 5 ? Path.of(args[5]) : null, args.length > 6 ? Path.of(args[6]) : null,
                Path.of(System.getProperty("qe.test.identityKeyFile")), null,
                Duration.ofMillis(Long.getLong("qe.test.leaseTimeoutMs", 0))); // -Dqe.test.leaseTimeoutMs: a lease
        try (ReplicationNode node = ReplicationNode.start(config);
             BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            System.out.println("READY");
            System.out.flush();
            String line;
            while ((line = in.readLine()) != null) {
                String[] c = line.trim().split(" ");
                try {
                    switch (c[0]) {
                        case "promote" -> node.promote(Long.parseLong(c[1]));
                        case "follow" -> node.follow(c[1], Long.parseLong(c[2]));
                        case "fence" -> node.fence(Long.parseLong(c[1]));
                        case "status" -> { }
                        case "json" -> { // the status as the admin endpoint serialises it, on one line
                            System.out.println("JSON " + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(node.status()));
                            System.out.flush();
                            continue;
                        }
                        case "exit" -> {
                            System.out.println("BYE");
                            return;
                        }
                        default -> throw new IllegalArgumentException("unknown command " + c[0]);
                    }
                    NodeStatus s = node.status();
                    QueueStatus qs = s.queues().get(0);
                    System.out.println("OK " + s.role() + " " + s.term() + " " + qs.lastIndex() + " " + qs.quorumIndex() + " " + qs.state());
                } catch (RuntimeException e) {
                    System.out.println("ERR " + e.getMessage().replace('\n', ' '));
                }
                System.out.flush();
            }
        }
    }
}
