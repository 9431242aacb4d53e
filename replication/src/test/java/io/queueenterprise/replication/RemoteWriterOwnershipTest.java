package io.queueenterprise.replication;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.WriterEpochs;
import io.queueenterprise.protocol.client.AppendAckDecoder;
import io.queueenterprise.protocol.client.ClientFrameDecoder;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.TailDataDecoder;
import io.queueenterprise.protocol.client.TailFrom;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.protocol.client.TailOpenEncoder;
import io.queueenterprise.protocol.client.WriteTag;
import io.queueenterprise.protocol.client.WriterClaim;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.WriteKeys;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.replication.client.ClientDrop;
import io.queueenterprise.replication.client.ClientGateway;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19, section 2, performed against a real node: a holder of the client credential and no data key tails the
 * queue to learn a writer's epoch and appends garbage under it with sequence 0xFFFFFFF0 (it was replicated and
 * poisoned the queue for every reader before), then does so holding the key too; a credential-only client appends
 * under its own epoch; a writer's sequence jumps; a captured CONNECT is replayed against the live session; a key
 * rotation before and after the nodes have the new version's write key. Each is refused with a typed reason, or dropped and counted, and the real writer and every reader
 * carry on.
 */
@org.junit.jupiter.api.Tag("integration")
@Timeout(120)
class RemoteWriterOwnershipTest {
    private static final String QUEUE = "payments";
    private static final CipherMode MODE = CipherMode.AES_128_CTR_POLY1305;

    @TempDir
    Path tmp;

    private TestCluster cluster() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        return new TestCluster(tmp, 1, List.of(spec)).serveClients();
    }

    @Test
    void aCredentialOnlyClientThatLearnsAWritersEpochByTailingCannotAppendUnderIt() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                AckMode.QUORUM, Duration.ofSeconds(10), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 3, List.of(spec)).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        ReplicationNode[] nodes = cluster.startNodes();
        try {
            nodes[0].promote(1);
            nodes[1].follow("replica-0", 1);
            nodes[2].follow("replica-0", 1);
            Path queueDir = cluster.queueDirectory(0, QUEUE);
            RemoteClientTest.initialise(queueDir, ring, true);
            ClientGateway gateway = nodes[0].clientGateway();
            try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender writer = remote.createAppender();
                 RawClient attacker = new RawClient(cluster.peers.get(0).clientPort(), cluster.clientCredential)) {
                for (int i = 0; i < 10; i++) {
                    writer.write(("real " + i).getBytes(StandardCharsets.UTF_8));
                }
                attacker.connect(QUEUE);

                // the attacker tails the queue (its credential allows that) and reads the writer's epoch off an envelope
                int length = new TailOpenEncoder().wrap(attacker.out, 0).encode(attacker.connection, ++attacker.txSequence, 0,
                        TailFrom.START, TailMode.ALL, 64, 1, -1);
                attacker.sessionMac.sign(attacker.out, 0, length);
                attacker.send(length);
                long epoch = 0;
                byte[] seen = null;
                for (ClientFrameDecoder f = attacker.next(5_000); f != null && seen == null; f = attacker.next(5_000)) {
                    if (f instanceof TailDataDecoder data && data.pieceOffset() == 0) {
                        byte[] env = new byte[data.pieceLength()];
                        data.buffer().getBytes(data.pieceAt(), env);
                        if (!Envelope.indexBound(env, 0)) {
                            seen = env;
                            epoch = Envelope.epoch(env, 0);
                        }
                    }
                }
                assertNotNull(seen, "the tail showed a remote writer's envelope");
                long appendedBefore = gateway.appended();

                // garbage of the right shape under the writer's epoch, sequence 0xFFFFFFF0
                byte[] garbage = seen.clone();
                for (int i = Envelope.PAYLOAD_OFFSET; i < garbage.length; i++) {
                    garbage[i] = (byte) 0xA5;
                }
                int poison = 0xFFFFFFF0;
                java.nio.ByteBuffer.wrap(garbage).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(Envelope.SEQUENCE_OFFSET, poison);
                attacker.send(attacker.append(++attacker.txSequence, 0, epoch, poison, garbage));
                RefusedDecoder refused = awaitRefusal(attacker);
                assertEquals(ClientRefusal.WRITE_UNAUTHORISED, refused.reason(), refused.message());

                // even a client that holds the master key (its write tag verifies) cannot write under another
                // session's epoch: not the poison, nor the writer's next sequence (which would have taken the real
                // writer's next write's place, answered to it as a retry)
                attacker.writeTag = new WriteTag(WriteKeys.derive(ring.activeKey(), QUEUE));
                attacker.send(attacker.append(++attacker.txSequence, 0, epoch, poison, garbage));
                refused = awaitRefusal(attacker);
                assertEquals(ClientRefusal.NOT_WRITER, refused.reason(), refused.message());
                java.nio.ByteBuffer.wrap(garbage).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(Envelope.SEQUENCE_OFFSET, 10);
                attacker.send(attacker.append(++attacker.txSequence, 0, epoch, 10, garbage));
                refused = awaitRefusal(attacker);
                assertEquals(ClientRefusal.NOT_WRITER, refused.reason(), refused.message());

                // it claims the epoch with a key of its own: the epoch does not commit to that key
                WriterClaim own = WriterClaim.generate();
                attacker.claim(epoch, own.publicKey(), own.sign(attacker.connection, attacker.clientNonce, attacker.nodeNonce));
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.BAD_CLAIM) == 1));
                attacker.send(attacker.append(++attacker.txSequence, 0, epoch, 10, garbage));
                refused = awaitRefusal(attacker);
                assertEquals(ClientRefusal.NOT_WRITER, refused.reason(), refused.message());
                assertEquals(appendedBefore, gateway.appended(), "nothing appended by the attack");

                // the real writer keeps writing, and every reader reads every excerpt
                for (int i = 10; i < 20; i++) {
                    writer.write(("real " + i).getBytes(StandardCharsets.UTF_8));
                }
            }
            // on every replica: every excerpt opens with the key, the writer's 20 in order
            for (int replica = 0; replica < 3; replica++) {
                Path dir = cluster.queueDirectory(replica, QUEUE);
                assertTrue(TestCluster.await(Duration.ofSeconds(20), () -> QueueContents.read(dir).size() == 21),
                        "replica " + replica + " holds every excerpt");
                List<String> all = RemoteClientTest.readAll(dir, ring);
                assertEquals(1 + 20, all.size(), "replica " + replica + ": " + all);
                for (int i = 0; i < 20; i++) {
                    assertTrue(all.get(1 + i).endsWith("=real " + i), "replica " + replica + ": " + all);
                }
            }
        } finally {
            TestCluster.closeAll(nodes);
        }
    }

    @Test
    void aSequenceJumpIsRefusedNamingTheExpectedSequenceAndAReplayedConnectLeavesTheLiveSessionAsItWas() throws Exception {
        TestCluster cluster = cluster();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            Path queueDir = cluster.queueDirectory(0, QUEUE);
            RemoteClientTest.initialise(queueDir, ring, false);
            ClientGateway gateway = node.clientGateway();
            QueueDescriptor descriptor = QueueDescriptor.read(queueDir);
            WriterClaim claim = WriterClaim.generate();
            byte[][] envelopes = RawClient.sealedEnvelopes(QUEUE, descriptor, ring, MODE, claim, "excerpt", 8);
            long epoch = claim.epoch();
            try (RawClient client = RawClient.writer(cluster.peers.get(0).clientPort(), cluster.clientCredential, QUEUE, claim, ring)) {
                for (int i = 0; i < 2; i++) {
                    client.send(client.append(++client.txSequence, 0, epoch, i, envelopes[i]));
                    client.expect(AppendAckDecoder.class);
                }
                long appendedBefore = gateway.appended();

                // a jump: 5 after 1
                client.send(client.append(++client.txSequence, 0, epoch, 5, envelopes[5]));
                RefusedDecoder refused = client.expect(RefusedDecoder.class);
                assertEquals(ClientRefusal.SEQUENCE_GAP, refused.reason(), refused.message());
                assertTrue(refused.message().contains("expected writer sequence 2"), refused.message());
                assertEquals(appendedBefore, gateway.appended(), "nothing appended for the jump");

                // the captured CONNECT, replayed: dropped and counted, unanswered
                client.send(client.connectFrame);
                assertNull(client.next(300), "a replayed CONNECT is not answered");
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.REPLAYED_CONNECT) == 1));

                // the live session is as it was: its key, its frame sequence, its claim
                client.send(client.append(++client.txSequence, 0, epoch, 2, envelopes[2]));
                AppendAckDecoder ack = client.expect(AppendAckDecoder.class);
                assertEquals(2, ack.writerSequence());
                assertEquals(appendedBefore + 1, gateway.appended());
            }
            assertEquals(1 + 3, RemoteClientTest.readAll(queueDir, ring).size());
        }
    }

    /**
     * APPEND_BATCH (several appends under one session MAC) is taken exactly as its entries would be as APPENDs: a forged
     * write tag in the middle refuses that entry alone (those before it are appended, those after it wait for it:
     * SEQUENCE_GAP); the batch replayed is dropped whole; one entry tampered with fails the one MAC, and nothing of the
     * batch is taken; the batch sent again answers what the node holds with its original indexes and appends the rest.
     */
    @Test
    void aBatchIsTakenEntryByEntryAndAForgedOrReplayedOrTamperedBatchAppendsNothingItShouldNot() throws Exception {
        TestCluster cluster = cluster();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            Path queueDir = cluster.queueDirectory(0, QUEUE);
            RemoteClientTest.initialise(queueDir, ring, false);
            ClientGateway gateway = node.clientGateway();
            WriterClaim claim = WriterClaim.generate();
            byte[][] envelopes = RawClient.sealedEnvelopes(QUEUE, QueueDescriptor.read(queueDir), ring, MODE, claim, "batched", 6);
            long epoch = claim.epoch();
            try (RawClient client = RawClient.writer(cluster.peers.get(0).clientPort(), cluster.clientCredential, QUEUE, claim, ring)) {
                long appendedBefore = gateway.appended();

                // entries 0..5 with entry 2's write tag forged
                byte[] forged = client.appendBatch(++client.txSequence, 0, epoch, 0, envelopes, 2);
                client.send(forged);
                java.util.Map<Integer, Long> acked = new java.util.TreeMap<>();
                List<String> refused = new java.util.ArrayList<>();
                collect(client, acked, refused, 6);
                assertEquals(java.util.Set.of(0, 1), acked.keySet(), "the entries before the forged one: " + acked + refused);
                // a gap names the sequence the node expects: the forged one's, for each entry after it
                assertEquals(List.of("WRITE_UNAUTHORISED 2", "SEQUENCE_GAP 2", "SEQUENCE_GAP 2", "SEQUENCE_GAP 2"), refused,
                        "each refused for itself, in order");
                assertEquals(appendedBefore + 2, gateway.appended());

                // the same frame again: a replay, dropped whole and unanswered
                client.send(forged);
                assertNull(client.next(300), "a replayed batch is not answered");
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.REPLAYED_FRAME) == 1));

                // a byte of the last entry's envelope changed on the way: the one MAC fails, nothing of the batch is taken
                byte[] tampered = client.appendBatch(++client.txSequence, 0, epoch, 0, envelopes, -1);
                tampered[tampered.length - ClientProtocol.MAC_LENGTH - 1] ^= 1;
                client.send(tampered);
                assertNull(client.next(300), "a batch that fails its MAC is not answered");
                assertTrue(TestCluster.await(Duration.ofSeconds(5), () -> gateway.drops(ClientDrop.BAD_MAC) == 1));
                assertEquals(appendedBefore + 2, gateway.appended());

                // the whole batch again, every tag good: 0 and 1 answered with their indexes, 2..5 appended after them
                client.send(client.appendBatch(++client.txSequence, 0, epoch, 0, envelopes, -1));
                java.util.Map<Integer, Long> again = new java.util.TreeMap<>();
                List<String> none = new java.util.ArrayList<>();
                collect(client, again, none, 6);
                assertEquals(List.of(), none);
                assertEquals(acked.get(0), again.get(0), "a resend: its original index");
                assertEquals(acked.get(1), again.get(1));
                for (int k = 2; k < 6; k++) {
                    assertEquals(again.get(k - 1) + 1, (long) again.get(k), "in writer-sequence order: " + again);
                }
                assertEquals(appendedBefore + 6, gateway.appended());
            }
            List<String> all = RemoteClientTest.readAll(queueDir, ring);
            assertEquals(1 + 6, all.size(), all.toString());
            for (int k = 0; k < 6; k++) {
                assertTrue(all.get(1 + k).endsWith("=batched " + k), all.toString());
            }
        }
    }

    /** Reads answers until {@code n} appends are answered: acknowledged (by sequence, with the index) or refused. */
    private static void collect(RawClient client, java.util.Map<Integer, Long> acked, List<String> refused, int n) throws Exception {
        while (acked.size() + refused.size() < n) {
            ClientFrameDecoder f = client.next(5_000);
            if (f == null) {
                throw new AssertionError("answers for " + (acked.size() + refused.size()) + " of " + n + ": " + acked + refused);
            }
            if (f instanceof AppendAckDecoder ack) {
                for (int i = 0; i < ack.count(); i++) {
                    acked.put(ack.firstSequence() + i, ack.index(i));
                }
            } else if (f instanceof RefusedDecoder r) {
                refused.add(r.reason() + " " + r.writerSequence());
            }
        }
    }

    @Test
    void aClientWithoutTheMasterKeyCannotAppendEvenUnderItsOwnEpochAndARotatedKeyWritesOnceItsWriteKeyIsStaged()
            throws Exception {
        TestCluster cluster = cluster();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            Path queueDir = cluster.queueDirectory(0, QUEUE);
            RemoteClientTest.initialise(queueDir, ring, false);
            ClientGateway gateway = node.clientGateway();
            QueueIdentity identity = new QueueIdentity(QUEUE, QueueDescriptor.read(queueDir).incarnationId());
            byte[] otherMaster = new byte[32];
            new java.security.SecureRandom().nextBytes(otherMaster);
            KeyRing rotated = ring.rotateTo(MasterKey.of(2, otherMaster));
            try (RawClient client = new RawClient(cluster.peers.get(0).clientPort(), cluster.clientCredential)) {
                client.connect(QUEUE);
                WriterClaim claim = WriterClaim.generate();
                client.claim(claim);
                // a credential-only client: its own epoch, properly claimed, an envelope of the right shape, no key
                byte[] env = new byte[Envelope.sealedLength(MODE, 8)];
                java.nio.ByteBuffer.wrap(env).order(java.nio.ByteOrder.LITTLE_ENDIAN).put(0, (byte) Envelope.VERSION)
                        .put(1, (byte) MODE.wireCode()).putShort(2, (short) 1).putInt(4, 0).putLong(8, claim.epoch());
                client.send(client.append(++client.txSequence, 0, claim.epoch(), 0, env));
                RefusedDecoder refused = client.expect(RefusedDecoder.class);
                assertEquals(ClientRefusal.WRITE_UNAUTHORISED, refused.reason(), refused.message());
                // a tag under a key it made up
                client.writeTag = new WriteTag(new byte[WriteKeys.LENGTH]);
                client.send(client.append(++client.txSequence, 0, claim.epoch(), 0, env));
                refused = client.expect(RefusedDecoder.class);
                assertEquals(ClientRefusal.WRITE_UNAUTHORISED, refused.reason(), refused.message());
                assertEquals(0, gateway.appended(), "nothing appended without the key");

                // rotation: envelopes sealed under key 2, tagged with key 2's write key; the node has only version 1's
                ExcerptSealer sealer = new ExcerptSealer(identity, () -> rotated, MODE, CryptoEngine.JCE,
                        WriterEpochs.of(claim::epoch));
                byte[] text = "after rotation".getBytes(StandardCharsets.US_ASCII);
                byte[] sealed = new byte[Envelope.sealedLength(MODE, text.length)];
                System.arraycopy(text, 0, sealed, Envelope.PAYLOAD_OFFSET, text.length);
                sealer.sealUnbound(sealed, 0, text.length);
                assertEquals(2, Envelope.keyId(sealed, 0));
                client.writeTag = new WriteTag(WriteKeys.derive(rotated.key(2), QUEUE));
                client.send(client.append(++client.txSequence, 0, claim.epoch(), 0, sealed));
                refused = client.expect(RefusedDecoder.class);
                assertEquals(ClientRefusal.WRITE_UNAUTHORISED, refused.reason(), refused.message());
                assertTrue(refused.message().contains("key version 2"), refused.message());
                // the operator stages version 2's write key; after the node's one-second look-again the write goes in
                TestCluster.authoriseWriters(queueDir, QUEUE, rotated);
                AppendAckDecoder ack = null;
                for (int attempt = 0; attempt < 50 && ack == null; attempt++) {
                    client.send(client.append(++client.txSequence, 0, claim.epoch(), 0, sealed));
                    ClientFrameDecoder answer = client.next(5_000);
                    if (answer instanceof AppendAckDecoder a) {
                        ack = a;
                    } else if (answer instanceof RefusedDecoder r && r.reason() == ClientRefusal.WRITE_UNAUTHORISED) {
                        Thread.sleep(100); // the node looks for a missing version again after a second
                    } else {
                        throw new AssertionError("unexpected answer " + (answer == null ? "none" : answer.type()));
                    }
                }
                assertNotNull(ack, "the staged write key was picked up");
                assertEquals(0, ack.writerSequence());
            }
            List<String> all = RemoteClientTest.readAll(queueDir, rotated);
            assertEquals(2, all.size(), all.toString());
            assertTrue(all.get(1).endsWith("=after rotation"), all.toString());
        }
    }

    /** The next REFUSED, skipping what the node streams to the attacker's tail meanwhile. */
    private static RefusedDecoder awaitRefusal(RawClient client) throws Exception {
        for (ClientFrameDecoder f = client.next(5_000); f != null; f = client.next(5_000)) {
            if (f instanceof RefusedDecoder r) {
                return r;
            }
            if (f instanceof AppendAckDecoder ack) {
                throw new AssertionError("the attacker's envelope was appended at index " + Long.toHexString(ack.index()));
            }
        }
        throw new AssertionError("no refusal within 5 s");
    }
}
