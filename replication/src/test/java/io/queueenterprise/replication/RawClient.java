package io.queueenterprise.replication;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.WriterEpochs;
import io.queueenterprise.protocol.client.AppendEncoder;
import io.queueenterprise.protocol.client.ChallengeDecoder;
import io.queueenterprise.protocol.client.ClaimEncoder;
import io.queueenterprise.protocol.client.ClientCredential;
import io.queueenterprise.protocol.client.ClientFrameDecoder;
import io.queueenterprise.protocol.client.ClientFrameDecoders;
import io.queueenterprise.protocol.client.ClientFrameMac;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ConnectEncoder;
import io.queueenterprise.protocol.client.ConnectedDecoder;
import io.queueenterprise.protocol.client.MalformedClientFrameException;
import io.queueenterprise.protocol.client.ProofEncoder;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.WriterClaim;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.replication.client.ClientGateway;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayDeque;

/**
 * A hand-driven client for attack tests: its own media driver, frames built byte by byte, so a test can replay,
 * forge and reorder what the real client never would. Loopback only.
 */
final class RawClient implements AutoCloseable {
    final long connection = new SecureRandom().nextLong();
    final ExpandableArrayBuffer out = new ExpandableArrayBuffer(4096);
    final ClientCredential credential;
    final ClientFrameMac handshakeMac;
    ClientFrameMac sessionMac;
    long txSequence;
    final byte[] clientNonce = new byte[ClientProtocol.NONCE_LENGTH];
    final byte[] nodeNonce = new byte[ClientProtocol.NONCE_LENGTH];
    /** The name CONNECT gives and the key the PROOF is signed with; empty and null: a client without an identity. */
    String clientName = "";
    io.queueenterprise.crypto.IdentityKey identity;
    /** The write tag APPENDs carry; null: sixteen zero bytes (a client without the key). */
    io.queueenterprise.protocol.client.WriteTag writeTag;
    /** The CONNECT this client sent, as it crossed the wire (for replay attacks). */
    byte[] connectFrame;
    private final Path dir;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final ExclusivePublication publication;
    private final Subscription replies;
    private final int replyPort;
    private final ArrayDeque<byte[]> received = new ArrayDeque<>();
    private final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) -> {
        byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        received.add(copy);
    });

    RawClient(int nodeClientPort, Path credentialFile) throws Exception {
        credential = ClientCredential.load(credentialFile);
        handshakeMac = credential.handshakeMac();
        dir = Files.createTempDirectory(Path.of("/dev/shm"), "qe-rawclient-");
        driver = MediaDriver.launch(new MediaDriver.Context().aeronDirectoryName(dir.toString())
                .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new SleepingMillisIdleStrategy(1))
                .dirDeleteOnStart(true).dirDeleteOnShutdown(true).termBufferSparseFile(true)
                .publicationTermBufferLength(1 << 20));
        aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir.toString()));
        replyPort = LoopbackPorts.freeUdpPort();
        replies = aeron.addSubscription("aeron:udp?endpoint=127.0.0.1:" + replyPort, ClientGateway.STREAM_ID);
        publication = aeron.addExclusivePublication("aeron:udp?endpoint=127.0.0.1:" + nodeClientPort, ClientGateway.STREAM_ID);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!publication.isConnected() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        if (!publication.isConnected()) {
            throw new IllegalStateException("the node's client endpoint did not connect");
        }
    }

    /** Runs the handshake for {@code queue}; returns the CONNECTED frame's bytes. */
    byte[] connect(String queue) throws Exception {
        new SecureRandom().nextBytes(clientNonce);
        io.queueenterprise.crypto.EphemeralKey ephemeral = io.queueenterprise.crypto.EphemeralKey.generate(new SecureRandom());
        byte[] clientEphemeral = ephemeral.publicKey();
        int length = new ConnectEncoder().wrap(out, 0).encode(connection, clientNonce, clientEphemeral, queue, "127.0.0.1",
                replyPort, clientName);
        handshakeMac.sign(out, 0, length);
        txSequence = 1;
        connectFrame = new byte[length];
        out.getBytes(0, connectFrame);
        send(length);
        ChallengeDecoder challenge = expect(ChallengeDecoder.class);
        challenge.nodeNonce(nodeNonce);
        byte[] nodeEphemeral = new byte[ClientProtocol.EPHEMERAL_LENGTH];
        challenge.nodeEphemeral(nodeEphemeral);
        byte[] proof = credential.proof("client", connection, queue, clientName, clientNonce, nodeNonce, clientEphemeral,
                nodeEphemeral);
        byte[] signature = identity == null ? new byte[ClientProtocol.SIGNATURE_LENGTH] : identity.sign(
                ClientCredential.signedTranscript(connection, queue, clientName, clientNonce, nodeNonce, clientEphemeral, nodeEphemeral));
        length = new ProofEncoder().wrap(out, 0).encode(connection, ++txSequence, proof, signature);
        handshakeMac.sign(out, 0, length);
        send(length);
        sessionMac = credential.sessionMac(connection, clientNonce, nodeNonce, ephemeral.agree(nodeEphemeral), clientEphemeral,
                nodeEphemeral, clientName);
        ConnectedDecoder connected = expect(ConnectedDecoder.class);
        byte[] copy = new byte[connected.length()];
        connected.buffer().getBytes(connected.offset(), copy);
        return copy;
    }

    /**
     * A writer as the real client is one: connected to {@code queue}, {@code claim}'s epoch claimed, and its APPENDs
     * tagged with the queue's write key from {@code ring}.
     */
    static RawClient writer(int nodeClientPort, Path credentialFile, String queue, WriterClaim claim,
                            KeyRing ring) throws Exception {
        RawClient client = new RawClient(nodeClientPort, credentialFile);
        try {
            client.connect(queue);
            client.claim(claim);
            client.writeTag = new io.queueenterprise.protocol.client.WriteTag(io.queueenterprise.crypto.WriteKeys.derive(ring.activeKey(), queue));
            return client;
        } catch (Exception | Error e) {
            client.close();
            throw e;
        }
    }

    /** Sends the CLAIM of {@code claim}'s epoch on this connection, signed as the real client signs it. */
    void claim(WriterClaim claim) throws InterruptedException {
        claim(claim.epoch(), claim.publicKey(), claim.sign(connection, clientNonce, nodeNonce));
    }

    /** Sends a CLAIM with whatever fields an attacker chooses. */
    void claim(long epoch, byte[] publicKey, byte[] signature) throws InterruptedException {
        int length = new ClaimEncoder().wrap(out, 0).encode(connection, ++txSequence, epoch, publicKey, signature);
        sessionMac.sign(out, 0, length);
        send(length);
    }

    /** Builds an APPEND of {@code envelope} at a chosen frame sequence, signed with the session key; returns its bytes. */
    byte[] append(long frameSequence, int queue, long epoch, int writerSequence, byte[] envelope) {
        out.putBytes(ClientProtocol.APPEND_ENVELOPE, envelope);
        byte[] tag = new byte[io.queueenterprise.protocol.client.WriteTag.LENGTH];
        if (writeTag != null) {
            writeTag.sign(envelope, 0, envelope.length, tag, 0);
        }
        out.putBytes(ClientProtocol.APPEND_WRITE_TAG, tag);
        int length = new AppendEncoder().wrap(out, 0).encodeAround(connection, frameSequence, queue, 0, epoch, writerSequence,
                envelope.length);
        sessionMac.sign(out, 0, length);
        byte[] frame = new byte[length];
        out.getBytes(0, frame);
        return frame;
    }

    /**
     * Builds an APPEND_BATCH of {@code envelopes} (writer sequences from {@code firstSequence} on) at a chosen frame
     * sequence, signed with the session key; the entry at {@code forgedTag} (-1: none) carries sixteen zero bytes as its
     * write tag. Returns its bytes.
     */
    byte[] appendBatch(long frameSequence, int queue, long epoch, int firstSequence, byte[][] envelopes, int forgedTag) {
        ExpandableArrayBuffer slot = new ExpandableArrayBuffer(ClientProtocol.APPEND_ENVELOPE + 4096);
        io.queueenterprise.protocol.client.AppendBatchEncoder e = new io.queueenterprise.protocol.client.AppendBatchEncoder()
                .wrap(out, 0).begin(connection, frameSequence, queue, 0, epoch, firstSequence);
        for (int k = 0; k < envelopes.length; k++) {
            byte[] tag = new byte[io.queueenterprise.protocol.client.WriteTag.LENGTH];
            if (writeTag != null && k != forgedTag) {
                writeTag.sign(envelopes[k], 0, envelopes[k].length, tag, 0);
            }
            slot.putBytes(ClientProtocol.APPEND_WRITE_TAG, tag);
            slot.putBytes(ClientProtocol.APPEND_ENVELOPE, envelopes[k]);
            e.entry(slot, ClientProtocol.APPEND_WRITE_TAG, envelopes[k].length);
        }
        int length = e.end();
        sessionMac.sign(out, 0, length);
        byte[] frame = new byte[length];
        out.getBytes(0, frame);
        return frame;
    }

    void send(int length) throws InterruptedException {
        byte[] frame = new byte[length];
        out.getBytes(0, frame);
        send(frame);
    }

    void send(byte[] frame) throws InterruptedException {
        UnsafeBuffer buffer = new UnsafeBuffer(frame);
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (publication.offer(buffer, 0, frame.length) < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("could not send");
            }
            Thread.sleep(1);
        }
    }

    /** The next frame from the node within 5 s, which must be the one {@code type} decodes. */
    <D extends ClientFrameDecoder> D expect(Class<D> type) throws Exception {
        ClientFrameDecoder f = next(5_000);
        if (!type.isInstance(f)) {
            throw new AssertionError("expected what " + type.getSimpleName() + " decodes, got " + (f == null ? "nothing" : f.type()
                    + (f instanceof RefusedDecoder r ? " " + r.reason() + ": " + r.message() : "")));
        }
        return type.cast(f);
    }

    /** The next frame within {@code millis} (decoded by its type's decoder, its own), or null. */
    ClientFrameDecoder next(long millis) throws Exception {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (received.isEmpty() && System.nanoTime() < deadline) {
            if (replies.poll(assembler, 10) == 0) {
                Thread.sleep(1);
            }
        }
        byte[] bytes = received.poll();
        if (bytes == null) {
            return null;
        }
        try {
            return new ClientFrameDecoders().wrap(new UnsafeBuffer(bytes), 0, bytes.length);
        } catch (MalformedClientFrameException e) {
            throw new AssertionError("the node sent a malformed frame: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        aeron.close();
        driver.close();
        credential.close();
    }

    /**
     * {@code count} envelopes sealed unbound (as a remote writer seals them) by a sealer of {@code queue} under
     * {@code ring} and the writer epoch {@code claim} commits to; plaintexts "{@code prefix} 0", "{@code prefix} 1", ...
     */
    static byte[][] sealedEnvelopes(String queue, QueueDescriptor descriptor, KeyRing ring, CipherMode mode,
                                    WriterClaim claim, String prefix, int count) {
        ExcerptSealer sealer = new ExcerptSealer(new QueueIdentity(queue, descriptor.incarnationId()), () -> ring, mode,
                CryptoEngine.JCE, WriterEpochs.of(claim::epoch));
        byte[][] envelopes = new byte[count][];
        for (int i = 0; i < count; i++) {
            byte[] text = (prefix + " " + i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            byte[] env = new byte[Envelope.sealedLength(mode, text.length)];
            System.arraycopy(text, 0, env, Envelope.PAYLOAD_OFFSET, text.length);
            sealer.sealUnbound(env, 0, text.length);
            envelopes[i] = env;
        }
        return envelopes;
    }
}
