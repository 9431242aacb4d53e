package io.queueenterprise.replication;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.protocol.client.AppendAckDecoder;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.WriteTag;
import io.queueenterprise.protocol.client.WriterClaim;
import io.queueenterprise.crypto.WriteKeys;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.replication.client.ClientDrop;
import io.queueenterprise.replication.client.ClientGateway;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Attacks on a node's client endpoint, performed: replayed writer sequences and frames, forged MACs, unknown
 * sessions, garbage, an envelope that lies about its writer, an oversized excerpt. Each is refused with a typed
 * reason or dropped and counted, and nothing is appended. And the node never sees plaintext: neither its queue
 * files nor the UDP payloads it received (its Aeron term buffers) hold a marker the client wrote.
 */
@org.junit.jupiter.api.Tag("integration")
class RemoteClientSecurityTest {
    private static final String QUEUE = "payments";

    @TempDir
    Path tmp;

    @Test
    void replaysForgeriesAndUnknownSessionsAreRefusedOrDroppedAndCountedAndNothingIsAppended() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 1, List.of(spec)).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            Path queueDir = cluster.queueDirectory(0, QUEUE);
            RemoteClientTest.initialise(queueDir, ring, false);
            ClientGateway gateway = node.clientGateway();
            QueueDescriptor descriptor = QueueDescriptor.read(queueDir);
            WriterClaim claim = WriterClaim.generate();
            byte[][] envelopes = RawClient.sealedEnvelopes(QUEUE, descriptor, ring, CipherMode.AES_128_CTR_POLY1305, claim,
                    "attack", 4);
            long epoch = Envelope.epoch(envelopes[0], 0);
            try (RawClient client = new RawClient(cluster.peers.get(0).clientPort(), cluster.clientCredential)) {
                client.connect(QUEUE);
                client.claim(claim);
                client.writeTag = new WriteTag(WriteKeys.derive(ring.activeKey(), QUEUE));
                long[] index = new long[3];
                byte[][] frames = new byte[3][];
                for (int i = 0; i < 3; i++) {
                    frames[i] = client.append(++client.txSequence, 0, epoch, i, envelopes[i]);
                    client.send(frames[i]);
                    index[i] = client.expect(AppendAckDecoder.class).index();
                }
                assertTrue(index[0] < index[1] && index[1] < index[2]);
                long appendedBefore = gateway.appended();

                // an old writer sequence in a fresh, authentic frame (a window resent after a failover): its original
                // index, nothing appended (REPLAYED only for one older than the appends the node remembers)
                client.send(client.append(++client.txSequence, 0, epoch, 0, envelopes[0]));
                assertEquals(index[0], client.expect(AppendAckDecoder.class).index());
                assertEquals(appendedBefore, gateway.appended());

                // a retry of the last one: the original index, nothing appended
                client.send(client.append(++client.txSequence, 0, epoch, 2, envelopes[2]));
                assertEquals(index[2], client.expect(AppendAckDecoder.class).index());

                // a captured frame replayed verbatim: dropped (its frame sequence is spent), counted, unanswered
                client.send(frames[1]);
                assertNull(client.next(300), "a replayed frame is not answered");
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.REPLAYED_FRAME) == 1));

                // a forged MAC
                byte[] forged = client.append(++client.txSequence, 0, epoch, 3, envelopes[3]);
                forged[forged.length - 1] ^= 1;
                client.send(forged);
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.BAD_MAC) == 1));

                // a session that does not exist
                byte[] stranger = client.append(++client.txSequence, 0, epoch, 3, envelopes[3]);
                stranger[ClientProtocol.CONNECTION_OFFSET] ^= 1;
                client.send(stranger);
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.UNKNOWN_SESSION) == 1));

                // garbage
                client.send(new byte[]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                        26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41});
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.MALFORMED) == 1));

                // an envelope whose header names another writer than the frame says
                client.send(client.append(++client.txSequence, 0, epoch + 1, 3, envelopes[3]));
                RefusedDecoder refused = client.expect(RefusedDecoder.class);
                assertEquals(ClientRefusal.MALFORMED_ENVELOPE, refused.reason(), refused.message());

                // an index-bound (local) envelope is not a remote client's to send
                byte[] bound = envelopes[3].clone();
                bound[Envelope.MODE_OFFSET] |= Envelope.FLAG_INDEX_BOUND;
                client.send(client.append(++client.txSequence, 0, epoch, 3, bound));
                assertEquals(ClientRefusal.MALFORMED_ENVELOPE, client.expect(RefusedDecoder.class).reason());

                assertEquals(appendedBefore, gateway.appended(), "nothing appended by any attack");
                assertEquals(1 + 3, QueueContents.read(queueDir).size(), "one local and three remote excerpts");
                assertEquals(1, gateway.drops(ClientDrop.REPLAYED_FRAME));
            }
            assertEquals(4, RemoteClientTest.readAll(queueDir, ring).size(), "everything there opens with the key, in order");
        }
    }

    @Test
    void theNodeNeverSeesPlaintextAndAnOversizedExcerptIsRefusedTooLarge() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 1, List.of(spec)).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        byte[] marker = "PLAINTEXT-MARKER-7f3a".getBytes(StandardCharsets.US_ASCII);
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = remote.createAppender()) {
                for (int i = 0; i < 100; i++) {
                    appender.write(marker);
                }
                RemoteQueueException large = assertThrows(RemoteQueueException.class, () -> appender.write(new byte[300 * 1024]));
                assertEquals(RemoteQueueException.Reason.TOO_LARGE, large.reason(), large.getMessage());
                assertFalse(large.mayBeAppended());
                // the UDP payloads the node received are in its Aeron term buffers: sealed there too
                Path aeronDir = ReplicationNode.aeronDirectoryOf(cluster.config(0));
                assertTrue(Files.isDirectory(aeronDir));
                assertFalse(anyFileContains(aeronDir, marker), "plaintext reached the node's UDP buffers");
                assertTrue(anyFileContains(aeronDir, "payments".getBytes(StandardCharsets.US_ASCII)),
                        "the oracle sees what crossed the wire (the CONNECT names the queue)");
            }
            assertEquals(1 + 100, RemoteClientTest.readAll(cluster.queueDirectory(0, QUEUE), ring).size());
            assertFalse(anyFileContains(cluster.dataDirectory(0), marker), "plaintext in the node's files");
        }
    }

    static boolean anyFileContains(Path dir, byte[] marker) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                byte[] bytes = Files.readAllBytes(f);
                for (int i = 0; i + marker.length <= bytes.length; i++) {
                    if (bytes[i] == marker[0] && Arrays.equals(bytes, i, i + marker.length, marker, 0, marker.length)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
