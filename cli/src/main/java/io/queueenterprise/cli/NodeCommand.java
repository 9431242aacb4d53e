package io.queueenterprise.cli;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.ReplicationNode;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.config.NodeConfigException;
import io.queueenterprise.replication.config.NodeConfigReader;
import io.queueenterprise.replication.engine.DropReason;
import io.queueenterprise.replication.node.AdminClient;
import io.queueenterprise.replication.node.AdminClientException;
import io.queueenterprise.replication.node.QueueNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * {@code qe node --config node.yaml} runs a queue node (the replication engine, its admin endpoint, metrics and
 * retention) until SIGTERM or SIGINT, then shuts it down gracefully. The subcommands talk to a running node's admin
 * endpoint. Exit codes: 0 done; 1 the node refused or could not be reached, or could not start; 2 bad usage or a
 * bad configuration document (one line naming the field and value).
 */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = {"Run a queue node: qe node --config node.yaml (docs/node-config.md). It serves replication,"
                + " the admin endpoint and Prometheus metrics until SIGTERM, then stops gracefully.",
                "Or drive a running node through its admin endpoint: qe node status|promote|follow|fence --admin HOST:PORT"
                        + " --token-file FILE.",
                "Exit status: 0 done, 1 refused by the node / unreachable / failed to start, 2 bad usage or configuration."},
        subcommands = {NodeCommand.Status.class, NodeCommand.Promote.class, NodeCommand.Follow.class, NodeCommand.Fence.class,
                NodeCommand.ForgetIdentity.class})
public final class NodeCommand implements Callable<Integer> {

    @Option(names = "--config", paramLabel = "FILE", description = "the node-configuration document (YAML, schema version 1)")
    Path config;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        if (config == null) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "qe node needs --config FILE to run a node, or a subcommand: status, promote, follow, fence");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        NodeConfig nodeConfig;
        try {
            nodeConfig = NodeConfigReader.read(config);
        } catch (NodeConfigException e) {
            // A field's message names the field, not the file: say which file; a read failure names it already.
            throw new CommandLine.ParameterException(spec.commandLine(),
                    e.field().isEmpty() && e.getMessage().startsWith("cannot read") ? e.getMessage() : config + ": " + e.getMessage());
        }
        QueueNode node;
        try {
            node = QueueNode.start(nodeConfig, config -> {
                ReplicationNode engine = ReplicationNode.start(config);
                return new QueueNode.Engine(engine, () -> droppedByReason(engine), engine::droppedFrames);
            }, QueueNode.RETENTION_INTERVAL);
        } catch (IOException | RuntimeException e) {
            err.println("qe node: " + nodeConfig.nodeId() + " could not start: " + (e.getMessage() == null ? e : e.getMessage()));
            err.flush();
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread shutdown = new Thread(() -> {
            try {
                out.println("qe node: " + nodeConfig.nodeId() + " stopping (graceful: what was acknowledged stays acknowledged)");
                out.flush();
                node.close();
                out.println("qe node: " + nodeConfig.nodeId() + " stopped");
                out.flush();
            } finally {
                stopped.countDown();
            }
        }, "qe-node-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdown);
        NodeStatus status = node.engine().status();
        out.printf(Locale.ROOT, "qe node: %s started: admin %s:%d, metrics %s:%d, queues %s; %s at term %d%s%n",
                nodeConfig.nodeId(), nodeConfig.admin().bindAddress(), node.adminPort(), nodeConfig.metrics().bindAddress(),
                node.metricsPort(), nodeConfig.queues().stream().map(NodeConfig.QueueSpec::name).collect(Collectors.joining(", ")),
                status.role(), status.term(), status.role() == NodeStatus.Role.STANDBY ? " (waiting for promote or follow)" : "");
        out.flush();
        stopped.await(); // until SIGTERM/SIGINT runs the hook
        return 0;
    }

    /** The engine's dropped-frame counters by reason, for the metrics. */
    private static Map<String, Long> droppedByReason(ReplicationNode engine) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (DropReason reason : DropReason.values()) {
            counts.put(reason.name(), engine.drops().get(reason));
        }
        counts.putAll(engine.clientFramesDroppedByReason()); // remote clients' frames, when the node serves them
        return counts;
    }

    /** Runs one admin request and prints the node's status after it; a refusal is one line and exit code 1. */
    abstract static class AdminCall implements Callable<Integer> {
        @Option(names = "--admin", paramLabel = "HOST:PORT", required = true, description = "the node's admin endpoint")
        String admin;

        @Option(names = "--token-file", paramLabel = "FILE", required = true,
                description = "file holding the admin token (the node's admin.credentialFile)")
        Path tokenFile;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        abstract NodeStatus request(AdminClient client);

        void validate() {
        }

        @Override
        public Integer call() {
            validate();
            AdminClient client = client();
            try {
                print(spec.commandLine().getOut(), request(client));
                return 0;
            } catch (AdminClientException e) {
                spec.commandLine().getErr().println("qe node " + spec.name() + ": " + e.getMessage());
                return 1;
            }
        }

        AdminClient client() {
            CommandLine commandLine = spec.commandLine();
            String port = admin.substring(admin.lastIndexOf(':') + 1);
            if (!admin.matches("[^\\s:/]+:[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw new CommandLine.ParameterException(commandLine, "--admin " + admin + " is not HOST:PORT (port 1..65535)");
            }
            String token;
            try {
                token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new CommandLine.ParameterException(commandLine, "--token-file cannot be read: " + DemoFiles.describe(e));
            }
            if (token.isEmpty()) {
                throw new CommandLine.ParameterException(commandLine, "--token-file " + tokenFile + " is empty");
            }
            return new AdminClient(admin, token);
        }

        long positiveTerm(long term) {
            if (term < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--term must be at least 1, got " + term);
            }
            return term;
        }
    }

    /**
     * The node's half of rotating its identity (docs/operator.md, "Per-node identities"): deletes the key the node drew
     * into its document's {@code identityKeyFile}, so that it draws a new one at its next start. Run beside the node
     * (in Kubernetes: {@code kubectl exec}, the image having no shell), then restart it. Only a drawn key: a node
     * whose document does not let it draw one would not start without its file.
     */
    @Command(name = "forget-identity", mixinStandardHelpOptions = true,
            description = "Delete the identity key this node drew (its document's identityKeyFile, with drawIdentityKeyIfAbsent:"
                    + " true) so that it draws a new one at its next start; then restart the node. Its peers take the new key"
                    + " once it is pinned again (Kubernetes: annotate the QueueCluster queue-enterprise.io/rotate-node first).")
    static final class ForgetIdentity implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE", required = true, description = "the node's configuration document")
        Path config;

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            NodeConfig node;
            try {
                node = NodeConfigReader.read(config);
            } catch (NodeConfigException e) {
                err.println("qe node forget-identity: " + e.getMessage());
                return 2;
            }
            Path key = node.identityKeyFile();
            if (key == null) {
                err.println("qe node forget-identity: " + config + " names no identityKeyFile: the node draws its identity"
                        + " per run and no peer pins it; nothing to forget");
                return 2;
            }
            if (!node.drawIdentityKeyIfAbsent()) {
                err.println("qe node forget-identity: " + config + " does not set drawIdentityKeyIfAbsent: true, so the node"
                        + " would not start without " + key + "; make it a new key pair with qe identity and pin that instead");
                return 2;
            }
            if (!Files.exists(key, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                spec.commandLine().getOut().println("no identity key at " + key + ": the node draws one at its next start");
                return 0;
            }
            String which;
            try {
                which = "identity " + io.queueenterprise.crypto.IdentityKey.fingerprint(
                        io.queueenterprise.crypto.IdentityKey.load(key, "identityKeyFile").publicKey());
            } catch (io.queueenterprise.crypto.CredentialFile.UnusableCredentialException e) {
                // deleted all the same: a key others could read (or a damaged one) is what most needs replacing
                which = "not a usable key: " + e.getMessage();
            }
            try {
                Files.delete(key);
            } catch (IOException e) {
                err.println("qe node forget-identity: " + key + " cannot be deleted: " + e + "; nothing deleted");
                return 1;
            }
            spec.commandLine().getOut().println("deleted " + key + " (" + which + "); restart the node: it"
                    + " draws a new key, which its peers take once it is pinned again");
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Print the node's role, term and every queue's replication state.")
    static final class Status extends AdminCall {
        @Option(names = "--json", description = "print the status as the endpoint's JSON")
        boolean json;

        @Override
        NodeStatus request(AdminClient client) {
            return client.status();
        }

        @Override
        public Integer call() {
            if (!json) {
                return super.call();
            }
            AdminClient client = client();
            try {
                spec.commandLine().getOut().println(new com.fasterxml.jackson.databind.ObjectMapper()
                        .writerWithDefaultPrettyPrinter().writeValueAsString(client.status()));
                return 0;
            } catch (AdminClientException | com.fasterxml.jackson.core.JsonProcessingException e) {
                spec.commandLine().getErr().println("qe node status: " + e.getMessage());
                return 1;
            }
        }
    }

    @Command(name = "promote", mixinStandardHelpOptions = true,
            description = "Make the node the leader at term T (higher than any term it has seen).")
    static final class Promote extends AdminCall {
        @Option(names = "--term", paramLabel = "T", required = true, description = "the new leadership term")
        long term;

        @Override
        void validate() {
            positiveTerm(term);
        }

        @Override
        NodeStatus request(AdminClient client) {
            return client.promote(term);
        }
    }

    @Command(name = "follow", mixinStandardHelpOptions = true,
            description = "Make the node follow leader ID at term T (at least the highest term it has seen).")
    static final class Follow extends AdminCall {
        @Option(names = "--leader", paramLabel = "ID", required = true, description = "the leader's node id (a configured peer)")
        String leader;

        @Option(names = "--term", paramLabel = "T", required = true, description = "the leader's term")
        long term;

        @Override
        void validate() {
            positiveTerm(term);
        }

        @Override
        NodeStatus request(AdminClient client) {
            return client.follow(leader, term);
        }
    }

    @Command(name = "fence", mixinStandardHelpOptions = true,
            description = "Stop the node leading at once and record term T as seen.")
    static final class Fence extends AdminCall {
        @Option(names = "--term", paramLabel = "T", required = true, description = "the term to record")
        long term;

        @Override
        void validate() {
            positiveTerm(term);
        }

        @Override
        NodeStatus request(AdminClient client) {
            return client.fence(term);
        }
    }

    /**
     * Role, term and one line per queue (and per follower, on a leader); then, only where there is something to say,
     * the problems the node survived or is in: its transport, peers it cannot address, and per queue its state's
     * detail, a blocked writer, resynchronisations and quarantines.
     */
    static void print(PrintWriter out, NodeStatus status) {
        out.printf(Locale.ROOT, "%s: %s at term %d%s%n", status.nodeId(), status.role(), status.term(),
                status.leaderNodeId() == null ? "" : ", leader " + status.leaderNodeId());
        NodeStatus.Transport transport = status.transport();
        if (!transport.up()) {
            out.printf(Locale.ROOT, "  transport DOWN: %s%n", transport.problem());
        }
        if (transport.restarts() > 0) {
            out.printf(Locale.ROOT, "  transport restarted %d time(s), last at %s: %s%n", transport.restarts(),
                    transport.lastRestartAt(), transport.lastRestartCause());
        }
        NodeStatus.Identity identity = status.identity();
        if (identity != null) { // one line: who this node is, and which peers must prove a pinned key
            List<String> peers = new ArrayList<>();
            for (NodeStatus.PeerAddress peer : status.peerAddresses()) {
                peers.add(peer.nodeId() + (!peer.identityPinned() ? " UNPINNED (peer credential only)"
                        : peer.identityFingerprint() == null ? " pinned (no session proved it yet)" : " pinned, proved " + peer.identityFingerprint()));
            }
            out.printf(Locale.ROOT, "  identity %s (%s); peers: %s%n", identity.fingerprint(),
                    identity.persistent() ? "from its key file" : "drawn for this run only: no peer can pin it",
                    peers.isEmpty() ? "none" : String.join(", ", peers));
        }
        for (NodeStatus.PeerAddress peer : status.peerAddresses()) {
            if (!peer.resolved()) {
                out.printf(Locale.ROOT, "  peer %s (%s) NOT addressable: %s%n", peer.nodeId(), peer.host(), peer.problem());
            } else if (peer.lastProblem() != null) {
                out.printf(Locale.ROOT, "  peer %s (%s) addressable; last problem at %s: %s%n", peer.nodeId(), peer.host(),
                        peer.lastProblemAt(), peer.lastProblem());
            }
        }
        for (QueueStatus q : status.queues()) {
            out.printf(Locale.ROOT, "  queue %s: %s, last %s, durable %s, quorum %s, first %s, %,d bytes replicated, %,d frames dropped%n",
                    q.name(), q.state(), index(q.lastIndex()), index(q.durableIndex()), index(q.quorumIndex()),
                    index(q.firstIndex()), q.bytesReplicated(), q.framesDropped());
            if (!q.stateDetail().isEmpty()) {
                out.printf(Locale.ROOT, "    detail: %s%n", q.stateDetail());
            }
            if (q.writer().blockedMillis() > 0 || q.writer().stalls() > 0) {
                out.printf(Locale.ROOT, "    writer: blocked %,d ms now; %d stall(s) of 1 s or more, last at %s%n",
                        q.writer().blockedMillis(), q.writer().stalls(), q.writer().lastStallAt());
            }
            if (q.resyncs().count() > 0) {
                out.printf(Locale.ROOT, "    resyncs: %d, last %s at %s: %s%n", q.resyncs().count(), q.resyncs().lastCause(),
                        q.resyncs().lastAt(), q.resyncs().lastDetail());
            }
            if (q.quarantines().count() > 0) {
                QueueStatus.Quarantines qs = q.quarantines();
                out.printf(Locale.ROOT, "    quarantines: %d, newest %s at %s, %s excerpts in %s%s%n", qs.count(), qs.lastReason(),
                        qs.lastAt(), qs.lastExcerpts() < 0 ? "?" : Long.toString(qs.lastExcerpts()), qs.lastDirectory(),
                        qs.lastDetail() == null ? "" : " (" + qs.lastDetail() + ")");
            }
            for (QueueStatus.PeerProgress p : q.peers()) {
                out.printf(Locale.ROOT, "    follower %s: %s, %s, durable %s, lag %,d excerpts / %.3f ms%n", p.nodeId(),
                        p.connected() ? "connected" : "NOT connected", p.state(), index(p.durableIndex()), p.lagExcerpts(),
                        p.lagNanos() / 1e6);
            }
        }
        out.flush();
    }

    /** Chronicle indexes read best in hex (cycle in the high bits); -1 means none. */
    private static String index(long index) {
        return index < 0 ? "none" : "0x" + Long.toHexString(index);
    }
}
