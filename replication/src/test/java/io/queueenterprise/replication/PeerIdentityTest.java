package io.queueenterprise.replication;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.engine.DropReason;
import io.queueenterprise.replication.engine.ReplicationAgent;
import io.queueenterprise.crypto.EphemeralKey;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19, section 2: identities per node. Every replica holds the peer credential (a shared secret) and its own
 * identity key; an insider holding the credential and node replica-1's identity key (replica-1 itself, or whoever
 * took both) tries to speak as replica-2, on real Aeron against a real leader:
 * <ol>
 *   <li>a whole node configured with replica-2's id and ports but replica-1's key opens no session: its signed
 *       CHALLENGEs are dropped as UNAUTHENTICATED, counted against replica-2's identity, and it gets no excerpt;</li>
 *   <li>with a session of its own (as replica-1), a frame naming replica-2 as sender is dropped and counted against
 *       replica-1 (SENDER_MISMATCH); one on replica-2's live session, MACed under the keys an insider derives from the
 *       credential and everything replica-2's handshake put on the wire, fails its MAC: without replica-2's (or the
 *       leader's) ephemeral X25519 key no one derives that pair's keys. replica-2's session carries on.</li>
 * </ol>
 */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PeerIdentityTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    @Test
    void aNodeHoldingAnotherNodesKeyOpensNoSessionInTheNameOfAThird() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        // The impostor: replica-2's id and ports, replica-1's identity key; its own configuration names that key for
        // replica-2 (the node refuses to start with a key its configuration does not name for it).
        List<NodeConfig.Peer> impostorView = new ArrayList<>(cluster.peers);
        impostorView.set(2, cluster.peers.get(2).withIdentityKey(cluster.peers.get(1).identityKey()));
        NodeConfig honest = cluster.config(2);
        NodeConfig impostor = new NodeConfig(honest.version(), honest.nodeId(), honest.dataDirectory(), impostorView,
                honest.peerCredentialFile(), honest.queues(), honest.admin(), honest.metrics(), honest.idleStrategy(),
                honest.clientCredentialFile(), honest.writeKeyDirectory(), cluster.identityKeyFile(1));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode intruder = ReplicationNode.start(impostor)) {
            leader.promote(1);
            intruder.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                appender.write(new byte[]{42});
            }
            assertTrue(TestCluster.await(WAIT, () -> leader.drops().getByPeer(DropReason.UNAUTHENTICATED, 2) >= 3),
                    "the impostor's CHALLENGEs are dropped and counted against replica-2's identity: " + leader.status());
            assertEquals(0, leader.sessionsEstablished(), "no session in replica-2's name");
            assertEquals(-1, intruder.status().queues().get(0).lastIndex(), "the impostor got no excerpt");
            assertEquals(0, leader.drops().getByPeer(DropReason.UNAUTHENTICATED, 1), "nothing counted against replica-1");
        }
    }

    @Test
    void aFrameNamingAnotherNodeAsSenderIsDroppedWhateverSessionItRidesOn() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        int leaderPort = cluster.peers.get(0).replicationPort();
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode replica2 = ReplicationNode.start(cluster.config(2));
             Spy handshakeOfReplica2 = new Spy(ReplicationNode.aeronDirectoryOf("replica-2", cluster.dataDirectory(2)), leaderPort);
             Spy answersToReplica2 = new Spy(ReplicationNode.aeronDirectoryOf("replica-0", cluster.dataDirectory(0)),
                     cluster.peers.get(2).replicationPort());
             RawPeer insider = new RawPeer(cluster, 1, leaderPort)) {
            leader.promote(1);
            replica2.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                appender.write(new byte[]{1});
            }
            assertTrue(TestCluster.await(WAIT, () -> replica2.status().queues().get(0).lastIndex() >= 0), "replica-2 replicates");
            long sessionsBefore = leader.sessionsEstablished();

            // The insider opens its own session, as replica-1, with replica-1's key: the leader takes it.
            insider.handshake(1);
            assertTrue(TestCluster.await(WAIT, () -> leader.sessionsEstablished() == sessionsBefore + 1), "replica-1's own session");

            // (a) on its own session, naming replica-2 as sender
            insider.send(insider.heartbeat(2, insider.sessionId, insider.txMac));
            assertTrue(TestCluster.await(WAIT, () -> leader.drops().getByPeer(DropReason.SENDER_MISMATCH, 1) == 1),
                    "dropped, counted against replica-1 who really sent it: " + leader.status());
            assertTrue(leader.droppedFrames().contains(io.queueenterprise.replication.node.DroppedFrames.byPeer(
                    "SENDER_MISMATCH", "replica-1", 1)), "exported by the peer's node id: " + leader.droppedFrames());

            // (b) on replica-2's session (its id read off the wire), MACed under keys derived from the credential and
            // every value replica-2's handshake put on the wire, the X25519 secret guessed from the insider's own key
            byte[] challenge = handshakeOfReplica2.latest(FrameType.CHALLENGE);
            byte[] response = answersToReplica2.latest(FrameType.CHALLENGE_RESPONSE);
            long session2 = java.nio.ByteBuffer.wrap(response).order(Frame.ORDER).getLong(Frame.SESSION_OFFSET);
            int body = Frame.HEADER_LENGTH;
            byte[] nonceI = Arrays.copyOfRange(challenge, body, body + 32);
            byte[] ephemeralI = Arrays.copyOfRange(challenge, body + 32, body + 64);
            byte[] nonceR = Arrays.copyOfRange(response, body + 32, body + 64);
            byte[] ephemeralR = Arrays.copyOfRange(response, body + 64, body + 96);
            byte[] guessed = EphemeralKey.generate(new SecureRandom()).agree(ephemeralR);
            SessionCrypto.FrameMac derived = SessionCrypto.sessionMac(insider.credential, guessed,
                    SessionCrypto.Direction.INITIATOR_TO_RESPONDER, session2, 2, 0, nonceI, nonceR, ephemeralI, ephemeralR);
            long badMacBefore = leader.drops().getByPeer(DropReason.BAD_MAC, 2);
            insider.send(insider.heartbeat(2, session2, derived));
            assertTrue(TestCluster.await(WAIT, () -> leader.drops().getByPeer(DropReason.BAD_MAC, 2) == badMacBefore + 1),
                    "replica-2's session keys are not derivable without its X25519 key: " + leader.status());

            assertEquals(sessionsBefore + 1, leader.sessionsEstablished(), "replica-2's session carries on");
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                appender.write(new byte[]{2});
            }
            assertTrue(TestCluster.await(WAIT, () -> replica2.status().queues().get(0).lastIndex()
                    == leader.status().queues().get(0).lastIndex()), "replica-2 still replicates");
            assertTrue(leader.status().queues().get(0).peers().stream()
                    .filter(p -> p.nodeId().equals("replica-2")).findFirst().orElseThrow().connected());
        }
    }

    /**
     * An insider as a peer of its own: the peer credential and one node's identity key, its own media driver, sending
     * to the leader's replication port and reading what the leader sends to that node's port.
     */
    private static final class RawPeer implements AutoCloseable {
        private final FrameInjector injector;
        private final Path dir;
        private final MediaDriver driver;
        private final Aeron aeron;
        private final Subscription inbound;
        private final IdentityKey key;
        final PeerCredential credential;
        private final SessionCrypto.FrameMac handshakeMac;
        private final SecureRandom random = new SecureRandom();
        long sessionId;
        SessionCrypto.FrameMac txMac;
        private long sequence;

        RawPeer(TestCluster cluster, int position, int leaderPort) throws Exception {
            credential = PeerCredential.load(cluster.credential);
            handshakeMac = SessionCrypto.handshakeMac(credential);
            key = IdentityKey.of(HexFormat.of().parseHex(Files.readString(cluster.identityKeyFile(position)).strip()));
            dir = Files.createTempDirectory(Path.of("/dev/shm"), "qe-raw-peer-");
            driver = MediaDriver.launch(new MediaDriver.Context().aeronDirectoryName(dir.toString())
                    .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new SleepingMillisIdleStrategy(1))
                    .dirDeleteOnStart(true).dirDeleteOnShutdown(true).termBufferSparseFile(true)
                    .publicationTermBufferLength(1 << 20));
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir.toString()));
            inbound = aeron.addSubscription("aeron:udp?endpoint=127.0.0.1:" + cluster.peers.get(position).replicationPort(),
                    ReplicationAgent.STREAM_ID);
            injector = new FrameInjector(leaderPort);
        }

        /** CHALLENGE, the leader's CHALLENGE_RESPONSE, PROOF: a session of this peer's own, at {@code term}. */
        void handshake(long term) throws Exception {
            sessionId = random.nextLong() & Long.MAX_VALUE;
            byte[] nonceI = new byte[32];
            random.nextBytes(nonceI);
            EphemeralKey ephemeral = EphemeralKey.generate(random);
            byte[] ephemeralI = ephemeral.publicKey();
            byte[] signature = key.sign(SessionCrypto.signedChallenge(sessionId, 1, 0, term, nonceI, ephemeralI));
            send(handshakeFrame(FrameType.CHALLENGE, term, concat(nonceI, ephemeralI, signature)));
            byte[] response = awaitResponse(term, nonceI, ephemeralI, signature);
            int body = Frame.HEADER_LENGTH;
            byte[] nonceR = Arrays.copyOfRange(response, body + 32, body + 64);
            byte[] ephemeralR = Arrays.copyOfRange(response, body + 64, body + 96);
            byte[] shared = ephemeral.agree(ephemeralR);
            byte[] proof = key.sign(SessionCrypto.signedTranscript("initiator", sessionId, 1, 0, term, nonceI, nonceR,
                    ephemeralI, ephemeralR));
            send(handshakeFrame(FrameType.PROOF, term, proof));
            txMac = SessionCrypto.sessionMac(credential, shared, SessionCrypto.Direction.INITIATOR_TO_RESPONDER, sessionId,
                    1, 0, nonceI, nonceR, ephemeralI, ephemeralR);
        }

        /** The leader's CHALLENGE_RESPONSE to this session id (the CHALLENGE re-sent meanwhile, as a node would). */
        private byte[] awaitResponse(long term, byte[] nonceI, byte[] ephemeralI, byte[] signature) throws Exception {
            byte[][] found = new byte[1][];
            FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) -> {
                Frame f = new Frame();
                try {
                    f.wrap(buffer, offset, length);
                } catch (Exception e) {
                    return;
                }
                if (f.type() == FrameType.CHALLENGE_RESPONSE && f.sessionId() == sessionId) {
                    found[0] = new byte[length];
                    buffer.getBytes(offset, found[0]);
                }
            });
            long deadline = System.nanoTime() + WAIT.toNanos();
            long resend = System.nanoTime();
            while (found[0] == null && System.nanoTime() < deadline) {
                if (inbound.poll(assembler, 16) == 0) {
                    Thread.sleep(1);
                }
                if (System.nanoTime() - resend > 500_000_000L && found[0] == null) {
                    resend = System.nanoTime(); // lost before the leader's image connected: the same CHALLENGE again
                    send(handshakeFrame(FrameType.CHALLENGE, term, concat(nonceI, ephemeralI, signature)));
                }
            }
            if (found[0] == null) {
                throw new IllegalStateException("no CHALLENGE_RESPONSE from the leader");
            }
            return found[0];
        }

        private byte[] handshakeFrame(FrameType type, long term, byte[] body) {
            ExpandableArrayBuffer b = new ExpandableArrayBuffer(256);
            int length = new FrameEncoder().begin(b, 0, type, 1, term, sessionId, 0).bytes(body, 0, body.length).finish();
            handshakeMac.sign(b, 0, length);
            byte[] out = new byte[length];
            b.getBytes(0, out);
            return out;
        }

        /** A HEARTBEAT naming {@code sender}, of {@code session}, MACed under {@code mac}. */
        byte[] heartbeat(int sender, long session, SessionCrypto.FrameMac mac) {
            ExpandableArrayBuffer b = new ExpandableArrayBuffer(128);
            int length = new FrameEncoder().begin(b, 0, FrameType.HEARTBEAT, sender, 1, session, 1_000_000 + ++sequence)
                    .i64(System.nanoTime()).u16(0).finish();
            mac.sign(b, 0, length);
            byte[] out = new byte[length];
            b.getBytes(0, out);
            return out;
        }

        void send(byte[] frame) throws InterruptedException {
            injector.send(frame);
        }

        @Override
        public void close() {
            injector.close();
            aeron.close();
            driver.close();
            credential.close();
            key.close();
        }
    }

    /** The latest frame of each type a node's media driver sends to one port (an Aeron spy subscription on it). */
    private static final class Spy implements AutoCloseable {
        private final Aeron aeron;
        private final Subscription spy;
        private final java.util.Map<FrameType, byte[]> latest = new java.util.EnumMap<>(FrameType.class);
        private final FragmentAssembler assembler;

        Spy(Path aeronDirectory, int port) {
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDirectory.toString()));
            spy = aeron.addSubscription("aeron-spy:aeron:udp?endpoint=127.0.0.1:" + port, ReplicationAgent.STREAM_ID);
            assembler = new FragmentAssembler((buffer, offset, length, header) -> {
                FrameType type = FrameType.of(buffer.getByte(offset + Frame.TYPE_OFFSET) & 0xFF);
                if (type != null) {
                    byte[] bytes = new byte[length];
                    buffer.getBytes(offset, bytes);
                    latest.put(type, bytes);
                }
            });
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (spy.imageCount() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the node's publication to that port exists from its start
            }
        }

        /** Polls what is there and returns the latest frame of {@code type}; fails when none was sent. */
        byte[] latest(FrameType type) throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                while (spy.poll(assembler, 64) > 0) {
                    Thread.onSpinWait();
                }
                if (latest.containsKey(type)) {
                    return latest.get(type);
                }
                Thread.sleep(5);
            }
            throw new IllegalStateException("no " + type + " seen");
        }

        @Override
        public void close() {
            aeron.close();
        }
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
