package io.queueenterprise.replication;

import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.replication.client.ClientDrop;
import io.queueenterprise.replication.client.ClientGateway;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19, section 2: identities per client, on real Aeron against a real node that authorises two named clients
 * (writer-a, writer-b), each with its own Ed25519 key, all holding the cluster's client credential:
 * <ul>
 *   <li>a client that names no authorised client, or none, is refused {@code UNKNOWN_CLIENT}; one that names
 *       writer-a but signs with another key (a stolen name) is refused {@code UNAUTHENTICATED}; a client of another
 *       cluster (another credential) is refused {@code UNAUTHENTICATED}; each counted against the name it gave;</li>
 *   <li>revoking writer-b (its line removed from the authorised-clients file, re-read while the node runs) closes its
 *       live connection (its next write fails) and refuses it at its next connect, while writer-a keeps writing on the
 *       same connection, untouched.</li>
 * </ul>
 */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RemoteClientIdentityTest {
    private static final String QUEUE = "payments";
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    @Test
    void unknownStolenAndForeignClientsAreRefusedWithTypedReasonsAndARevokedOneOnlyIsCutOff() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(TestCluster.sealedQueue(QUEUE, AckMode.ASYNC))).serveClients();
        SecureRandom random = new SecureRandom();
        Path a = identity("writer-a", random);
        Path b = identity("writer-b", random);
        Path stranger = identity("stranger", random);
        Path authorised = tmp.resolve("authorised-clients");
        Files.writeString(authorised, "# name public-key\n" + line("writer-a", a) + line("writer-b", b));
        NodeConfig config = cluster.config(0).withAuthorisedClientsFile(authorised);
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(config)) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            ClientGateway gateway = node.clientGateway();

            RemoteQueueException unknown = assertThrows(RemoteQueueException.class, () -> client(cluster, ring)
                    .identity("stranger", stranger).build().close());
            assertEquals(ClientRefusal.UNKNOWN_CLIENT, unknown.refusal(), unknown.getMessage());
            RemoteQueueException unnamed = assertThrows(RemoteQueueException.class, () -> client(cluster, ring).build().close());
            assertEquals(ClientRefusal.UNKNOWN_CLIENT, unnamed.refusal(), unnamed.getMessage());
            assertEquals(2, gateway.drops(ClientGateway.UNNAMED, ClientDrop.UNKNOWN_CLIENT));

            RemoteQueueException stolen = assertThrows(RemoteQueueException.class, () -> client(cluster, ring)
                    .identity("writer-a", stranger).build().close());
            assertEquals(RemoteQueueException.Reason.UNAUTHENTICATED, stolen.reason(), stolen.getMessage());
            assertEquals(ClientRefusal.UNAUTHENTICATED, stolen.refusal(), stolen.getMessage());
            assertEquals(1, gateway.drops("writer-a", ClientDrop.UNAUTHENTICATED), "counted against the name it gave");

            Path foreign = tmp.resolve("other-cluster-credential");
            byte[] secret = new byte[32];
            random.nextBytes(secret);
            Files.write(foreign, secret);
            RemoteQueueException other = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder(cluster.clientAddresses())
                    .queue(QUEUE).clientCredential(foreign).keyRing(ring).identity("writer-a", a)
                    .connectTimeout(Duration.ofSeconds(5)).build().close());
            assertEquals(RemoteQueueException.Reason.UNAUTHENTICATED, other.reason(), other.getMessage());
            assertEquals(0, gateway.appended(), "nothing appended for any of them");

            try (RemoteQueue writerA = client(cluster, ring).identity("writer-a", a).build();
                 RemoteQueue writerB = client(cluster, ring).identity("writer-b", b).build();
                 QueueAppender appenderA = writerA.createAppender();
                 QueueAppender appenderB = writerB.createAppender()) {
                appenderA.write("a1".getBytes(StandardCharsets.UTF_8));
                appenderB.write("b1".getBytes(StandardCharsets.UTF_8));

                long established = gateway.sessionsEstablished();
                Files.writeString(authorised, line("writer-a", a)); // writer-b revoked
                assertTrue(TestCluster.await(WAIT, () -> gateway.authorised().key("writer-b") == null), "the file is re-read");
                RemoteQueueException revoked = assertThrows(RemoteQueueException.class, () -> {
                    for (int i = 0; i < 50; i++) { // the refusal of its live connection may cross a write or two
                        appenderB.write(("b" + (i + 2)).getBytes(StandardCharsets.UTF_8));
                        Thread.sleep(20);
                    }
                });
                assertEquals(ClientRefusal.UNKNOWN_CLIENT, revoked.refusal(), revoked.getMessage());
                for (int i = 2; i <= 20; i++) {
                    appenderA.write(("a" + i).getBytes(StandardCharsets.UTF_8)); // writer-a: same connection, untouched
                }
                assertEquals(established, gateway.sessionsEstablished(), "writer-a wrote on, on its connection: no new session");
            }
            RemoteQueueException again = assertThrows(RemoteQueueException.class, () -> client(cluster, ring)
                    .identity("writer-b", b).build().close());
            assertEquals(ClientRefusal.UNKNOWN_CLIENT, again.refusal(), again.getMessage());
            List<String> stored = RemoteClientTest.readAll(cluster.queueDirectory(0, QUEUE), ring);
            assertEquals(20, stored.stream().filter(s -> s.matches(".*=a\\d+")).count(), stored.toString());
        }
    }

    private static RemoteQueue.Builder client(TestCluster cluster, KeyRing ring) {
        return RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE).clientCredential(cluster.clientCredential)
                .keyRing(ring).connectTimeout(Duration.ofSeconds(5)).ackTimeout(Duration.ofSeconds(5));
    }

    private Path identity(String name, SecureRandom random) throws Exception {
        Path file = tmp.resolve(name + ".key");
        try (IdentityKey key = IdentityKey.generate(random)) {
            Files.writeString(file, key.seedHex());
        }
        return file;
    }

    private static String line(String name, Path keyFile) throws Exception {
        try (IdentityKey key = IdentityKey.of(java.util.HexFormat.of().parseHex(Files.readString(keyFile).strip()))) {
            return name + " " + key.publicKeyText() + "\n";
        }
    }
}
