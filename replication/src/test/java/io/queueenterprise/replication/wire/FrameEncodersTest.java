package io.queueenterprise.replication.wire;

import io.queueenterprise.replication.QueueStatus;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One encoder per frame type, beside its decoder: every encoder's frame decodes to the values it was given, and its
 * bytes are exactly those of the field-by-field samples the decoders were fuzzed with (the wire format did not move).
 * Frames are decoded from an off-heap buffer at an odd offset, as they are read where Aeron delivers them.
 */
@Tag("unit")
class FrameEncodersTest {
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
    private final FrameEncoder frame = new FrameEncoder();
    private final byte[] nonce = filled(32, 7);

    @Test
    void handshakeFramesRoundTrip() throws MalformedFrameException {
        HandshakeEncoder encoder = new HandshakeEncoder();
        byte[] ephemeral = filled(32, 8);
        byte[] signature = filled(64, 9);
        byte[] challenge = finish(encoder.challenge(frame.begin(buffer, 0, FrameType.CHALLENGE, 1, 2, 77, 0), nonce,
                ephemeral, signature));
        assertSameFrame(sample(FrameType.CHALLENGE), challenge);
        HandshakeBody body = new HandshakeBody().wrap(offHeap(challenge));
        byte[] read = new byte[32];
        byte[] readSignature = new byte[64];
        body.initiatorNonce(read);
        assertArrayEquals(nonce, read);
        body.ephemeral(read);
        assertArrayEquals(ephemeral, read);
        body.signature(readSignature);
        assertArrayEquals(signature, readSignature);

        byte[] responder = filled(32, 10);
        byte[] responderEphemeral = filled(32, 11);
        byte[] responderSignature = filled(64, 12);
        HandshakeBody response = new HandshakeBody().wrap(offHeap(finish(encoder.challengeResponse(
                frame.begin(buffer, 0, FrameType.CHALLENGE_RESPONSE, 0, 2, 77, 0), nonce, responder, responderEphemeral,
                responderSignature))));
        response.responderNonce(read);
        assertArrayEquals(responder, read);
        response.ephemeral(read);
        assertArrayEquals(responderEphemeral, read);
        response.signature(readSignature);
        assertArrayEquals(responderSignature, readSignature);

        assertSameFrame(sample(FrameType.PROOF),
                finish(encoder.proof(frame.begin(buffer, 0, FrameType.PROOF, 1, 2, 77, 0), signature)));
        assertThrows(IllegalArgumentException.class,
                () -> encoder.proof(frame.begin(buffer, 0, FrameType.PROOF, 1, 2, 77, 0), new byte[63]));
    }

    @Test
    void helloRoundTrips() throws MalformedFrameException {
        HelloEncoder encoder = new HelloEncoder();
        encoder.begin(frame.begin(buffer, 0, FrameType.HELLO, 1, 2, 77, 1), 2)
                .queue("orders", 41, 2).term(1, -1).term(2, 30)
                .queue("fills", -1, 0);
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.HELLO), bytes);
        HelloBody hello = new HelloBody().wrap(offHeap(bytes));
        assertEquals(2, hello.queueCount());
        assertEquals("orders", hello.queueName(0));
        assertEquals(41, hello.lastIndex(0));
        assertEquals(2, hello.termCount(0));
        assertEquals(2, hello.term(0, 1));
        assertEquals(30, hello.previousLastIndex(0, 1));
        assertEquals("fills", hello.queueName(1));
        assertEquals(0, hello.termCount(1));
        assertThrows(IllegalArgumentException.class, () -> encoder.begin(frame.begin(buffer, 0, FrameType.HELLO, 1, 2, 77, 1), 0));
    }

    @Test
    void descriptorRoundTrips() throws MalformedFrameException {
        byte[] descriptor = "x=1\n\n".getBytes(StandardCharsets.US_ASCII);
        new DescriptorEncoder().begin(frame.begin(buffer, 0, FrameType.DESCRIPTOR, 0, 2, 77, 1), 0, 30, 0, 1)
                .term(2, 30).descriptor(descriptor);
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.DESCRIPTOR), bytes);
        DescriptorBody body = new DescriptorBody().wrap(offHeap(bytes));
        assertEquals(30, body.resumeAfter());
        assertEquals(0, body.leaderFirstIndex());
        assertEquals(1, body.termCount());
        assertEquals(2, body.term(0));
        assertArrayEquals(descriptor, body.descriptor());

        new DescriptorEncoder().begin(frame.begin(buffer, 0, FrameType.DESCRIPTOR, 0, 2, 77, 1), 3, -1, -1, 0).descriptor(null);
        DescriptorBody none = new DescriptorBody().wrap(offHeap(finish(frame)));
        assertEquals(3, none.queue());
        assertNull(none.descriptor());
    }

    @Test
    void dataRoundTripsAndCountsItsExcerpts() throws MalformedFrameException {
        DataEncoder encoder = new DataEncoder().begin(frame.begin(buffer, 0, FrameType.DATA, 0, 2, 77, 2), 0, 31);
        encoder.excerpt(31, new byte[]{1, 2, 3}, 0, 3).excerpt(32, new byte[0], 0, 0);
        assertEquals(2, encoder.count());
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.DATA), bytes);
        DataBody data = new DataBody().wrap(offHeap(bytes));
        assertEquals(2, data.count());
        assertEquals(31, data.quorumIndex());
        assertTrue(data.next());
        assertEquals(31, data.index());
        byte[] excerpt = new byte[data.excerptLength()];
        data.buffer().getBytes(data.excerptOffset(), excerpt);
        assertArrayEquals(new byte[]{1, 2, 3}, excerpt);
        assertTrue(data.next());
        assertEquals(32, data.index());
        assertEquals(0, data.excerptLength());
        assertFalse(data.next());
        assertEquals(DataBody.EXCERPT_HEADER_LENGTH + 3, DataEncoder.excerptSize(3));
    }

    @Test
    void excerptPartRoundTrips() throws MalformedFrameException {
        new ExcerptPartEncoder().encode(frame.begin(buffer, 0, FrameType.EXCERPT_PART, 0, 2, 77, 3), 0, 31, 33, 5, 2,
                new byte[]{9, 3, 4, 5}, 1, 3);
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.EXCERPT_PART), bytes);
        ExcerptPartBody part = new ExcerptPartBody().wrap(offHeap(bytes));
        assertEquals(33, part.index());
        assertEquals(5, part.totalLength());
        assertEquals(2, part.partOffset());
        assertEquals(3, part.bytesLength());
        assertTrue(part.isLast());
        assertEquals(5, part.buffer().getByte(part.bytesOffset() + 2));
    }

    @Test
    void ackRoundTrips() throws MalformedFrameException {
        new AckEncoder().encode(frame.begin(buffer, 0, FrameType.ACK, 1, 2, 77, 2), 0, QueueStatus.State.LIVE, 32);
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.ACK), bytes);
        for (QueueStatus.State state : List.of(QueueStatus.State.CATCHING_UP, QueueStatus.State.DISK_FULL, QueueStatus.State.CORRUPTED)) {
            new AckEncoder().encode(frame.begin(buffer, 0, FrameType.ACK, 1, 2, 77, 2), 7, state, -1);
            AckBody ack = new AckBody().wrap(offHeap(finish(frame)));
            assertEquals(7, ack.queue());
            assertEquals(state, ack.state());
            assertEquals(-1, ack.durableIndex());
        }
    }

    @Test
    void heartbeatRoundTripsAndHoldsItsCount() throws MalformedFrameException {
        HeartbeatEncoder encoder = new HeartbeatEncoder();
        encoder.begin(frame.begin(buffer, 0, FrameType.HEARTBEAT, 0, 2, 77, 3), 123456789L, 1).queue(32, 31);
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.HEARTBEAT), bytes);
        HeartbeatBody heartbeat = new HeartbeatBody().wrap(offHeap(bytes));
        assertEquals(123456789L, heartbeat.sentNanos());
        assertEquals(1, heartbeat.count());
        assertEquals(32, heartbeat.lastIndex(0));
        assertEquals(31, heartbeat.quorumIndex(0));

        encoder.begin(frame.begin(buffer, 0, FrameType.HEARTBEAT, 1, 2, 77, 4), 5, 0); // a follower's: no queues
        assertEquals(0, new HeartbeatBody().wrap(offHeap(finish(frame))).count());
        assertThrows(IllegalStateException.class, () -> encoder.queue(1, 1));
    }

    @Test
    void refusalRoundTripsAndCutsItsMessage() throws MalformedFrameException {
        new RefusalEncoder().encode(frame.begin(buffer, 0, FrameType.REFUSAL, 0, 2, 77, 4), RefusalReason.STALE_TERM,
                RefusalBody.NO_QUEUE, 3, "stale");
        byte[] bytes = finish(frame);
        assertSameFrame(sample(FrameType.REFUSAL), bytes);
        RefusalBody refusal = new RefusalBody().wrap(offHeap(bytes));
        assertEquals(RefusalReason.STALE_TERM, refusal.reason());
        assertEquals(RefusalBody.NO_QUEUE, refusal.queue());
        assertEquals(3, refusal.detail());
        assertEquals("stale", refusal.message());

        new RefusalEncoder().encode(frame.begin(buffer, 0, FrameType.REFUSAL, 0, 2, 77, 5), RefusalReason.CANNOT_STORE, 1, -1,
                "x".repeat(RefusalBody.MAX_MESSAGE + 10));
        assertEquals(RefusalBody.MAX_MESSAGE, new RefusalBody().wrap(offHeap(finish(frame))).message().length());
    }

    private byte[] finish(FrameEncoder encoder) {
        int length = encoder.finish();
        byte[] out = new byte[length];
        buffer.getBytes(0, out);
        return out;
    }

    /** The frame in native memory at an odd offset, as Aeron hands a fragment over. */
    private static Frame offHeap(byte[] bytes) throws MalformedFrameException {
        int offset = 13;
        MutableDirectBuffer direct = new UnsafeBuffer(ByteBuffer.allocateDirect(offset + bytes.length + 7));
        direct.putBytes(offset, bytes);
        return new Frame().wrap(direct, offset, bytes.length);
    }

    /** The same header and body (the MAC trailer is the authenticator's, unsigned here). */
    private static void assertSameFrame(byte[] expected, byte[] actual) {
        assertEquals(expected.length, actual.length, "frame length");
        assertArrayEquals(Arrays.copyOf(expected, expected.length - Frame.MAC_LENGTH),
                Arrays.copyOf(actual, actual.length - Frame.MAC_LENGTH));
    }

    private static byte[] sample(FrameType type) {
        for (byte[] s : FrameSamples.all()) {
            if (s[1] == type.code) {
                return s;
            }
        }
        throw new AssertionError("no sample of " + type);
    }

    private static byte[] filled(int n, int value) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) value);
        return b;
    }
}
