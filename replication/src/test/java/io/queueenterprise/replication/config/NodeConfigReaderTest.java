package io.queueenterprise.replication.config;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.config.NodeConfig.Encryption;
import io.queueenterprise.replication.config.NodeConfig.IdleStrategySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every example document reads; every bad document in the table is refused with its field path and value. */
@org.junit.jupiter.api.Tag("unit")
class NodeConfigReaderTest {

    static Path examples() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        assertTrue(dir != null, "no project root above " + System.getProperty("user.dir"));
        return dir.resolve("examples/node-config");
    }

    static Stream<Path> exampleFiles() throws IOException {
        try (Stream<Path> files = Files.list(examples())) {
            List<Path> yaml = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
            assertTrue(yaml.size() >= 4, "examples/node-config holds " + yaml);
            return yaml.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("exampleFiles")
    void everyExampleReads(Path file) {
        NodeConfig config = NodeConfigReader.read(file);
        assertEquals(NodeConfig.SCHEMA_VERSION, config.version());
        assertEquals(config.nodeId(), config.self().id());
        assertFalse(config.queues().isEmpty());
    }

    @Test
    void theSmallestExampleGetsTheDocumentedDefaults() {
        NodeConfig config = NodeConfigReader.read(examples().resolve("single-node.yaml"));
        NodeConfig.QueueSpec events = config.queues().get(0);
        assertEquals(AckMode.ASYNC, events.ackMode());
        assertEquals(Duration.ofSeconds(1), events.ackTimeout());
        assertEquals(NodeConfig.Retention.unbounded(), events.retention());
        assertEquals("0.0.0.0", config.admin().bindAddress());
        assertEquals("0.0.0.0", config.metrics().bindAddress());
        assertEquals(IdleStrategySpec.BACKOFF, config.idleStrategy());
        assertEquals(Path.of("/var/lib/queue-enterprise"), config.dataDirectory());
    }

    @Test
    void theThreeReplicaExampleReadsAsWritten() {
        NodeConfig config = NodeConfigReader.read(examples().resolve("three-replicas-replica-0.yaml"));
        assertEquals(List.of("replica-0", "replica-1", "replica-2"), config.peers().stream().map(NodeConfig.Peer::id).toList());
        assertEquals(40101, config.peers().get(1).replicationPort());
        NodeConfig.QueueSpec orders = config.queues().get(0);
        assertEquals("FAST_HOURLY", orders.rollCycle());
        assertEquals(Encryption.AES_128_CTR_POLY1305, orders.encryption());
        assertEquals(AckMode.QUORUM, orders.ackMode());
        assertEquals(Optional.of(Duration.ofHours(24)), orders.retention().maxAge());
        assertEquals(Optional.of(10L << 30), orders.retention().maxBytes());
        assertEquals(Encryption.AES_128_CTR, config.queues().get(1).encryption());
        assertEquals(40190, config.admin().port());
        assertEquals("127.0.0.1", config.admin().bindAddress());
        assertEquals(List.of(40120, 40121, 40122), config.peers().stream().map(NodeConfig.Peer::clientPort).toList());
        assertEquals(Path.of("/etc/queue-enterprise/client/credential"), config.clientCredentialFile());
        assertTrue(config.servesClients());
        assertEquals(Path.of("/etc/queue-enterprise/write-keys"), config.writeKeyDirectory());
        assertFalse(NodeConfigReader.read(examples().resolve("single-node.yaml")).servesClients());
    }

    @Test
    void aNodeThatServesClientsReadsItsWriteKeyDirectoryOrHasNone() {
        String serving = GOOD.replace("replicationPort: 40100", "replicationPort: 40100\n    clientPort: 40120")
                .replace("replicationPort: 40101", "replicationPort: 40101\n    clientPort: 40121")
                .replace("peerCredentialFile: /peer/credential", "peerCredentialFile: /peer/credential\nclientCredentialFile: /client/credential");
        assertNull(NodeConfigReader.parse(serving, Path.of("/")).writeKeyDirectory(), "none: the node takes no remote APPEND");
        NodeConfig config = NodeConfigReader.parse(serving + "writeKeyDirectory: keys/write\n", Path.of("/etc/qe"));
        assertEquals(Path.of("/etc/qe/keys/write"), config.writeKeyDirectory());
    }

    @Test
    void relativePathsAreResolvedAgainstTheDocumentsDirectory(@org.junit.jupiter.api.io.TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("conf/node.yaml");
        Files.createDirectories(file.getParent());
        Files.writeString(file, GOOD.replace("dataDirectory: /data", "dataDirectory: ../data"));
        assertEquals(tmp.resolve("data"), NodeConfigReader.read(file).dataDirectory());
    }

    @Test
    void sizesAndDurationsInEveryUnit() {
        NodeConfig config = NodeConfigReader.parse(GOOD.replace("maxAge: 24h", "maxAge: 250ms")
                .replace("maxBytes: 10Gi", "maxBytes: 1048576"), Path.of("/"));
        assertEquals(Optional.of(Duration.ofMillis(250)), config.queues().get(0).retention().maxAge());
        assertEquals(Optional.of(1048576L), config.queues().get(0).retention().maxBytes());
        String[][] cases = {{"30s", "PT30S"}, {"5m", "PT5M"}, {"7d", "PT168H"}};
        for (String[] c : cases) {
            assertEquals(Duration.parse(c[1]), NodeConfigReader.parse(GOOD.replace("maxAge: 24h", "maxAge: " + c[0]),
                    Path.of("/")).queues().get(0).retention().maxAge().orElseThrow());
        }
        assertEquals(512L << 20, NodeConfigReader.parse(GOOD.replace("maxBytes: 10Gi", "maxBytes: 512Mi"), Path.of("/"))
                .queues().get(0).retention().maxBytes().orElseThrow());
        assertEquals(3L << 10, NodeConfigReader.parse(GOOD.replace("maxBytes: 10Gi", "maxBytes: \"3Ki\""), Path.of("/"))
                .queues().get(0).retention().maxBytes().orElseThrow());
    }

    @Test
    void aPeerWithoutIdentityKeyIsReadUnpinned() {
        NodeConfig config = NodeConfigReader.parse(GOOD.replace("    identityKey: A/04YEgGqj60Vnsyie3MqfvmaA1FBD5yw9imA3YehNs=\n", ""),
                Path.of("/"));
        assertEquals(null, config.peers().get(1).identityKey());
        assertEquals("8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=", config.peers().get(0).identityKey());
        assertEquals(Path.of("/identity/key"), config.identityKeyFile());
    }

    @Test
    void drawingAndPeerIdentitiesAreOffUnlessSet() {
        NodeConfig plain = NodeConfigReader.parse(GOOD, Path.of("/etc/qe"));
        assertFalse(plain.drawIdentityKeyIfAbsent());
        assertEquals(null, plain.peerIdentitiesFile());
        NodeConfig set = NodeConfigReader.parse(GOOD.replace("identityKeyFile: /identity/key\n",
                "identityKeyFile: /identity/key\ndrawIdentityKeyIfAbsent: true\npeerIdentitiesFile: pins/peers\n"), Path.of("/etc/qe"));
        assertTrue(set.drawIdentityKeyIfAbsent());
        assertEquals(Path.of("/etc/qe/pins/peers"), set.peerIdentitiesFile());
    }

        /** A valid document; each bad case changes one thing in it. */
    static final String GOOD = """
            version: 1
            nodeId: replica-0
            dataDirectory: /data
            peers:
              - id: replica-0
                host: 127.0.0.1
                replicationPort: 40100
                identityKey: 8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=
              - id: replica-1
                host: 127.0.0.1
                replicationPort: 40101
                identityKey: A/04YEgGqj60Vnsyie3MqfvmaA1FBD5yw9imA3YehNs=
            peerCredentialFile: /peer/credential
            identityKeyFile: /identity/key
            queues:
              - name: orders
                rollCycle: FAST_HOURLY
                encryption: AES_128_CTR_POLY1305
                ackMode: QUORUM
                ackTimeout: 1s
                retention:
                  maxAge: 24h
                  maxBytes: 10Gi
              - name: telemetry
                rollCycle: FAST_DAILY
                encryption: NONE
                ackMode: ASYNC
            admin:
              port: 40190
              credentialFile: /admin/token
            metrics:
              port: 40191
            idleStrategy: BACKOFF
            """;

    static Stream<Arguments> badDocuments() {
        return Stream.of(
                bad("ackMode: ASYNC", "ackMode: QUROUM",
                        "queues[1].ackMode: \"QUROUM\" is not one of ASYNC, REPLICATED_READS, QUORUM"),
                bad("version: 1", "version: 2", "version: 2 is not supported; this node reads schema version 1"),
                bad("version: 1\n", "", "version: is required"),
                bad("nodeId: replica-0", "nodeId: replica-7", "nodeId: \"replica-7\" is not among peers (replica-0, replica-1)"),
                bad("nodeId: replica-0", "nodeId: 0", "nodeId: must be a string, got 0"),
                bad("replicationPort: 40101", "replicationPort: 70000", "peers[1].replicationPort: 70000 is not an integer in 1..65535"),
                bad("replicationPort: 40101", "replicationPort: 0", "peers[1].replicationPort: 0 is not an integer in 1..65535"),
                bad("replicationPort: 40101", "replicationPort: \"40101\"", "peers[1].replicationPort: \"40101\" is not an integer in 1..65535"),
                bad("id: replica-1", "id: replica-0", "peers[1].id: \"replica-0\" is already used by peers[0]"),
                bad("replicationPort: 40101", "replicationPort: 40100", "peers[1].replicationPort: \"127.0.0.1:40100\" is already used by peers[0]"),
                bad("name: telemetry", "name: orders", "queues[1].name: \"orders\" is already used by queues[0]"),
                bad("name: telemetry", "name: ../etc", "queues[1].name: \"../etc\" is not a safe name"),
                bad("name: telemetry", "name: .hidden", "queues[1].name: \".hidden\" is not a safe name"),
                bad("name: telemetry", "name: \"a/b\"", "queues[1].name: \"a/b\" is not a safe name"),
                bad("rollCycle: FAST_DAILY", "rollCycle: WEEKLYISH", "queues[1].rollCycle: \"WEEKLYISH\" is not one of "),
                bad("encryption: NONE", "encryption: AES", "queues[1].encryption: \"AES\" is not one of NONE, AES_128_CTR, AES_128_CTR_POLY1305"),
                bad("    encryption: NONE\n", "", "queues[1].encryption: is required"),
                bad("ackTimeout: 1s", "ackTimeout: 1 s", "queues[0].ackTimeout: \"1 s\" is not a duration above zero"),
                bad("ackTimeout: 1s", "ackTimeout: 0s", "queues[0].ackTimeout: \"0s\" is not a duration above zero"),
                bad("ackTimeout: 1s", "ackTimeout: 1000", "queues[0].ackTimeout: 1000 is not a duration above zero"),
                bad("maxAge: 24h", "maxAge: 1y", "queues[0].retention.maxAge: \"1y\" is not a duration above zero"),
                bad("maxBytes: 10Gi", "maxBytes: 10GB", "queues[0].retention.maxBytes: \"10GB\" is not a size above zero"),
                bad("maxBytes: 10Gi", "maxBytes: -5", "queues[0].retention.maxBytes: -5 is not a size above zero"),
                bad("maxBytes: 10Gi", "maxBytes: 99999999999Ti", "queues[0].retention.maxBytes: \"99999999999Ti\" is too large a size"),
                bad("      maxAge: 24h\n      maxBytes: 10Gi\n", "      {}\n",
                        "queues[0].retention: names neither maxAge nor maxBytes"),
                bad("retention:", "retension:", "queues[0].retension: unknown field"),
                bad("idleStrategy: BACKOFF", "idleStrategy: SPIN", "idleStrategy: \"SPIN\" is not one of BUSY_SPIN, YIELDING, BACKOFF, SLEEPING"),
                bad("idleStrategy: BACKOFF", "idleStrategy: BACKOFF\nextra: 1", "extra: unknown field"),
                bad("  port: 40191", "  port: 40190", "metrics.port: 40190 is also admin.port"),
                bad("  port: 40191", "  port: 40100", "metrics.port: 40100 is also this node's replicationPort (peers[0].replicationPort)"),
                bad("  credentialFile: /admin/token\n", "", "admin.credentialFile: is required"),
                bad("  credentialFile: /admin/token", "  credentialFile: /admin/token\n  bindadress: 1.2.3.4", "admin.bindadress: unknown field"),
                bad("host: 127.0.0.1\n    replicationPort: 40101", "host: \"bad host\"\n    replicationPort: 40101",
                        "peers[1].host: \"bad host\" is not a host name or address"),
                bad("peerCredentialFile: /peer/credential", "peerCredentialFile: \"\"", "peerCredentialFile: must not be empty"),
                bad("queues:\n", "queues: []\nqueuesOld:\n", "queues: must be a list of at least one entry, got a list"),
                bad("metrics:\n  port: 40191", "metrics: 40191", "metrics: must be a mapping of fields, got 40191"),
                bad("    replicationPort: 40101", "    replicationPort: 40101\n    clientPort: 40121",
                        "clientCredentialFile: missing: peers[1].clientPort is set"),
                bad("peerCredentialFile: /peer/credential", "peerCredentialFile: /peer/credential\nclientCredentialFile: /client/credential",
                        "peers[0].clientPort: missing: this node has a clientCredentialFile"),
                bad("peerCredentialFile: /peer/credential", "peerCredentialFile: /peer/credential\nwriteKeyDirectory: /write-keys",
                        "writeKeyDirectory: set, but without clientCredentialFile"),
                bad("    replicationPort: 40100", "    replicationPort: 40100\n    clientPort: 40100",
                        "peers[0].clientPort: 40100 is also this node's replicationPort"),
                bad("    replicationPort: 40100", "    replicationPort: 40100\n    clientPort: 0",
                        "peers[0].clientPort: 0 is not an integer in 1..65535"),
                bad("identityKeyFile: /identity/key\n", "", "identityKeyFile: missing: peers[0].identityKey pins this node's identity"),
                bad("identityKey: A/04YEgGqj60Vnsyie3MqfvmaA1FBD5yw9imA3YehNs=", "identityKey: not-a-key",
                        "peers[1].identityKey: is not an Ed25519 public key"),
                bad("identityKey: A/04YEgGqj60Vnsyie3MqfvmaA1FBD5yw9imA3YehNs=", "identityKey: 8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=",
                        "peers[1].identityKey: \"8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=\" is already used by peers[0]"),
                bad("identityKeyFile: /identity/key\n", "identityKeyFile: /identity/key\ndrawIdentityKeyIfAbsent: yes-please\n",
                        "drawIdentityKeyIfAbsent: \"yes-please\" is not true or false"),
                bad("identityKeyFile: /identity/key\n", "identityKeyFile: /identity/key\ndrawIdentityKeyIfAbsent: 1\n",
                        "drawIdentityKeyIfAbsent: 1 is not true or false"),
                Arguments.of(GOOD.replace("    identityKey: 8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=\n", "")
                        .replace("identityKeyFile: /identity/key\n", "drawIdentityKeyIfAbsent: true\n"),
                        "drawIdentityKeyIfAbsent: true, but identityKeyFile is missing"),
                bad("identityKeyFile: /identity/key\n", "identityKeyFile: /identity/key\npeerIdentitiesFile: ''\n",
                        "peerIdentitiesFile: must not be empty"),
                bad("identityKeyFile: /identity/key\n", "identityKeyFile: /identity/key\npeerIdentitiesFile: [a]\n",
                        "peerIdentitiesFile: must be a string, got a list"),
                bad("nodeId: replica-0", "nodeId: replica-0\nnodeId: replica-1", "not a valid YAML document at line"),
                bad("version: 1", "version: [1", "not a valid YAML document at line"));
    }

    private static Arguments bad(String from, String to, String expectedMessageStart) {
        assertTrue(GOOD.contains(from), "the good document has no " + from);
        return Arguments.of(GOOD.replaceFirst(java.util.regex.Pattern.quote(from), java.util.regex.Matcher.quoteReplacement(to)),
                expectedMessageStart);
    }

    @ParameterizedTest
    @MethodSource("badDocuments")
    void everyBadDocumentIsRefusedNamingFieldAndValue(String document, String expectedMessageStart) {
        NodeConfigException e = assertThrows(NodeConfigException.class, () -> NodeConfigReader.parse(document, Path.of("/")));
        assertTrue(e.getMessage().startsWith(expectedMessageStart), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @Test
    void anEmptyDocumentOrFileIsRefused(@org.junit.jupiter.api.io.TempDir Path tmp) {
        assertEquals("the document is empty", assertThrows(NodeConfigException.class,
                () -> NodeConfigReader.parse("", Path.of("/"))).getMessage());
        assertTrue(assertThrows(NodeConfigException.class, () -> NodeConfigReader.read(tmp.resolve("missing.yaml")))
                .getMessage().startsWith("cannot read "));
    }
}
