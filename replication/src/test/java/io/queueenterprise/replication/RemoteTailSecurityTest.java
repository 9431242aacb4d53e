package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.protocol.client.TailDataDecoder;
import io.queueenterprise.protocol.client.TailFrom;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.protocol.client.TailOpenEncoder;
import io.queueenterprise.protocol.client.TailStatusDecoder;
import io.queueenterprise.protocol.client.TailStatusKind;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteTailer;
import io.queueenterprise.replication.client.ClientDrop;
import io.queueenterprise.replication.client.ClientGateway;
import io.queueenterprise.replication.client.TailCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node's tail serving under attack and abuse: a TAIL_OPEN that does not verify (forged MAC, unknown connection)
 * is dropped and counted and streams nothing; a client that asks for everything and never drains its subscription
 * does not stall the node (appends keep being acknowledged) and loses its tail, counted; what a tail sends is
 * sealed (a plaintext marker is not in the client's Aeron term buffers, where the node's frames land, nor in the
 * node's files).
 */
@org.junit.jupiter.api.Tag("integration")
class RemoteTailSecurityTest {
    private static final String QUEUE = RemoteTailTest.QUEUE;

    @TempDir
    Path tmp;

    @Test
    void aTailOpenThatDoesNotVerifyIsDroppedCountedAndStreamsNothing() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(RemoteTailTest.spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            ClientGateway gateway = node.clientGateway();
            try (RawClient client = new RawClient(cluster.peers.get(0).clientPort(), cluster.clientCredential)) {
                client.connect(QUEUE);
                // signed with the handshake key instead of the session's: not this session's frame
                int length = new TailOpenEncoder().wrap(client.out, 0).encode(client.connection, ++client.txSequence, 0, TailFrom.START,
                        TailMode.ALL, 100, 1, -1);
                client.handshakeMac.sign(client.out, 0, length);
                client.send(length);
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.BAD_MAC) == 1));
                // a connection the node never authenticated
                length = new TailOpenEncoder().wrap(client.out, 0).encode(client.connection + 1, ++client.txSequence, 0, TailFrom.START,
                        TailMode.ALL, 100, 2, -1);
                client.sessionMac.sign(client.out, 0, length);
                client.send(length);
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.UNKNOWN_SESSION) == 1));
                assertNull(client.next(1000), "nothing streamed to either");
                assertEquals(0, gateway.tailCount(TailCounter.OPENED));

                // the oracle: the same frame signed with the session key opens the tail
                length = new TailOpenEncoder().wrap(client.out, 0).encode(client.connection, ++client.txSequence, 0, TailFrom.START,
                        TailMode.ALL, 100, 3, -1);
                client.sessionMac.sign(client.out, 0, length);
                client.send(length);
                assertEquals(TailStatusKind.OPENED, client.expect(TailStatusDecoder.class).kind());
                assertEquals(3, client.expect(TailDataDecoder.class).tail(), "the local excerpt, sealed");
            }
        }
    }

    @Test
    void aClientThatNeverDrainsDoesNotStallTheNodeAndLosesItsTail() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(RemoteTailTest.spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            ClientGateway gateway = node.clientGateway();
            try (RawClient slow = new RawClient(cluster.peers.get(0).clientPort(), cluster.clientCredential);
                 RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                         .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(5)).build();
                 QueueAppender appender = remote.createAppender()) {
                slow.connect(QUEUE);
                // asks for everything, then never polls its subscription again
                int length = new TailOpenEncoder().wrap(slow.out, 0).encode(slow.connection, ++slow.txSequence, 0, TailFrom.START,
                        TailMode.ALL, 1 << 20, 7, -1);
                slow.sessionMac.sign(slow.out, 0, length);
                slow.send(length);
                byte[] message = new byte[2048];
                long started = System.nanoTime();
                int written = 0;
                // 6 MiB through a 128 KiB reply term the client never drains; each write must be acknowledged in time
                while (written < 3000 || System.nanoTime() - started < 12_000_000_000L) {
                    appender.write(message);
                    written++;
                    if (written % 50 == 0) {
                        Thread.sleep(1);
                    }
                }
                assertTrue(gateway.tailCount(TailCounter.BACK_PRESSURED_OFFERS) > 0, "the node met the client's back-pressure");
                assertTrue(TestCluster.await(Duration.ofSeconds(10), () -> gateway.tailCount(TailCounter.SLOW_CONSUMERS_CLOSED) == 1),
                        "the stalled tail was closed and counted");
                System.out.println("slow tail: " + written + " appends acknowledged while the tail was stalled; "
                        + gateway.tailCount(TailCounter.EXCERPTS_SENT) + " excerpts sent to it, "
                        + gateway.tailCount(TailCounter.BACK_PRESSURED_OFFERS) + " back-pressured offers");
            }
        }
    }

    @Test
    void whatATailSendsIsSealed() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(RemoteTailTest.spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        byte[] marker = "PLAINTEXT-MARKER-c41e".getBytes(StandardCharsets.US_ASCII);
        Path clientAeron = tmp.resolve("client-aeron");
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = remote.createAppender()) {
                for (int i = 0; i < 50; i++) {
                    appender.write(marker);
                }
            }
            try (RemoteQueue reader = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).aeronDirectory(clientAeron).build();
                 RemoteTailer tailer = reader.createTailer()) {
                List<String> read = RemoteTailTest.drain(tailer, 51, Duration.ofSeconds(10));
                assertEquals(51, read.size());
                byte[] buffer = new byte[64];
                assertTrue(tailer.moveToIndex(tailer.lastReadIndex()));
                assertEquals(marker.length, tailer.read(buffer), "the tailer opens what it received");
                assertTrue(Files.isDirectory(clientAeron));
                assertFalse(RemoteClientSecurityTest.anyFileContains(clientAeron, marker), "plaintext crossed the wire to the client");
                assertTrue(RemoteClientSecurityTest.anyFileContains(clientAeron, QUEUE.getBytes(StandardCharsets.US_ASCII)),
                        "the oracle sees what the node sent (the descriptor in CONNECTED names the queue)");
            }
            assertFalse(RemoteClientSecurityTest.anyFileContains(cluster.dataDirectory(0), marker), "plaintext in the node's files");
        }
    }
}
