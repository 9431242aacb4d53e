package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One encoder/decoder pair per frame type: round trips, and every way a decoder refuses a frame, typed. */
@Tag("unit")
class ClientProtocolTest {
    /** Where frames are written in their buffer: not 0, so an encoder or decoder that ignores its offset fails. */
    private static final int AT = 13;

    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(1024);

    @FunctionalInterface
    interface Wrap {
        ClientFrameDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException;
    }

    /** Every type's decoder. */
    private static Map<ClientFrameType, Wrap> decoders() {
        Map<ClientFrameType, Wrap> d = new EnumMap<>(ClientFrameType.class);
        d.put(ClientFrameType.CONNECT, new ConnectDecoder()::wrap);
        d.put(ClientFrameType.CHALLENGE, new ChallengeDecoder()::wrap);
        d.put(ClientFrameType.PROOF, new ProofDecoder()::wrap);
        d.put(ClientFrameType.CONNECTED, new ConnectedDecoder()::wrap);
        d.put(ClientFrameType.APPEND, new AppendDecoder()::wrap);
        d.put(ClientFrameType.APPEND_ACK, new AppendAckDecoder()::wrap);
        d.put(ClientFrameType.APPEND_PENDING, new AppendPendingDecoder()::wrap);
        d.put(ClientFrameType.REFUSED, new RefusedDecoder()::wrap);
        d.put(ClientFrameType.TAIL_OPEN, new TailOpenDecoder()::wrap);
        d.put(ClientFrameType.TAIL_STATUS, new TailStatusDecoder()::wrap);
        d.put(ClientFrameType.TAIL_DATA, new TailDataDecoder()::wrap);
        d.put(ClientFrameType.TAIL_CREDIT, new TailCreditDecoder()::wrap);
        d.put(ClientFrameType.TAIL_END, new TailEndDecoder()::wrap);
        d.put(ClientFrameType.CLAIM, new ClaimDecoder()::wrap);
        d.put(ClientFrameType.APPEND_BATCH, new AppendBatchDecoder()::wrap);
        return d;
    }

    private static void header(ClientFrameDecoder d, ClientFrameType type, long connection, long sequence, int length) {
        assertSame(type, d.type());
        assertEquals(connection, d.connection());
        assertEquals(sequence, d.sequence());
        assertEquals(AT, d.offset());
        assertEquals(length, d.length());
    }

    // ------------------------------------------------------------------------------------------------ round trips

    @Test
    void connectRoundTrips() throws Exception {
        byte[] nonce = filled(32, 1);
        int n = new ConnectEncoder().wrap(out, AT).encode(-5, nonce, filled(32, 2), "örders", "10.0.0.7", 65535, "orders-writer");
        ConnectDecoder d = new ConnectDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.CONNECT, -5, 1, n);
        byte[] got = new byte[32];
        d.clientNonce(got);
        assertArrayEquals(nonce, got);
        assertEquals("örders", d.queueName());
        assertEquals("10.0.0.7", d.replyHost());
        assertEquals(65535, d.replyPort());
        d.clientEphemeral(got);
        assertArrayEquals(filled(32, 2), got);
        assertEquals("orders-writer", d.clientName());
        int unnamed = new ConnectEncoder().wrap(out, AT).encode(-5, nonce, filled(32, 2), "orders", "10.0.0.7", 1, "");
        assertEquals("", new ConnectDecoder().wrap(out, AT, unnamed).clientName());
    }

    @Test
    void challengeRoundTrips() throws Exception {
        int n = new ChallengeEncoder().wrap(out, AT).encode(9, 2, filled(32, 1), filled(32, 2), filled(32, 3), filled(32, 6));
        ChallengeDecoder d = new ChallengeDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.CHALLENGE, 9, 2, n);
        byte[] got = new byte[32];
        d.clientNonce(got);
        assertArrayEquals(filled(32, 1), got);
        d.nodeNonce(got);
        assertArrayEquals(filled(32, 2), got);
        d.nodeProof(got);
        assertArrayEquals(filled(32, 3), got);
        d.nodeEphemeral(got);
        assertArrayEquals(filled(32, 6), got);
    }

    @Test
    void proofRoundTrips() throws Exception {
        int n = new ProofEncoder().wrap(out, AT).encode(9, 3, filled(32, 4), filled(64, 5));
        ProofDecoder d = new ProofDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.PROOF, 9, 3, n);
        byte[] got = new byte[32];
        d.clientProof(got);
        assertArrayEquals(filled(32, 4), got);
        byte[] signature = new byte[64];
        d.signature(signature);
        assertArrayEquals(filled(64, 5), signature);
    }

    @Test
    void connectedRoundTripsEveryAckMode() throws Exception {
        for (ClientAckMode mode : ClientAckMode.values()) {
            int n = new ConnectedEncoder().wrap(out, AT).encode(9, 4, 77, mode != ClientAckMode.ASYNC, mode, 513, 1 << 20,
                    "leader.local", 40121, filled(300, 5));
            ConnectedDecoder d = new ConnectedDecoder().wrap(out, AT, n);
            header(d, ClientFrameType.CONNECTED, 9, 4, n);
            assertEquals(77, d.term());
            assertEquals(mode != ClientAckMode.ASYNC, d.leads());
            assertSame(mode, d.ackMode());
            assertEquals(513, d.queue());
            assertEquals(1 << 20, d.maxEnvelope());
            assertEquals("leader.local", d.leaderHost());
            assertEquals(40121, d.leaderPort());
            assertArrayEquals(filled(300, 5), d.descriptor());
        }
        int n = new ConnectedEncoder().wrap(out, AT).encode(9, 5, 1, false, ClientAckMode.ASYNC, 0, 0, "", 0, new byte[0]);
        ConnectedDecoder d = new ConnectedDecoder().wrap(out, AT, n);
        assertEquals("", d.leaderHost());
        assertEquals(0, d.leaderPort());
        assertEquals(0, d.descriptor().length);
    }

    @Test
    void appendRoundTripsAroundItsEnvelope() throws Exception {
        byte[] envelope = filled(100, 6);
        out.putBytes(AT + ClientProtocol.APPEND_ENVELOPE, envelope);
        int n = new AppendEncoder().wrap(out, AT).encodeAround(9, 6, 3, 12, Long.MIN_VALUE, -1, envelope.length);
        assertEquals(ClientProtocol.APPEND_OVERHEAD + envelope.length, n);
        AppendDecoder d = new AppendDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.APPEND, 9, 6, n);
        assertEquals(3, d.queue());
        assertEquals(12, d.clientTerm());
        assertEquals(Long.MIN_VALUE, d.epoch());
        assertEquals(-1, d.writerSequence());
        byte[] got = new byte[d.envelopeLength()];
        d.buffer().getBytes(d.envelopeOffset(), got);
        assertArrayEquals(envelope, got);
    }

    @Test
    void appendBatchRoundTripsEachEntryWithItsTagAndEnvelope() throws Exception {
        ExpandableArrayBuffer window = new ExpandableArrayBuffer(4096);
        int[] lengths = {100, 0, 37, 2000};
        int[] at = new int[lengths.length];
        int place = 5;
        for (int k = 0; k < lengths.length; k++) { // APPEND frames' tag and envelope, as a client's window holds them
            at[k] = place;
            window.putBytes(place, filled(WriteTag.LENGTH, 40 + k));
            window.putBytes(place + WriteTag.LENGTH, filled(lengths[k], k));
            place += WriteTag.LENGTH + lengths[k] + 3;
        }
        AppendBatchEncoder e = new AppendBatchEncoder().wrap(out, AT).begin(9, 6, 3, 12, Long.MIN_VALUE, -2);
        int expected = ClientProtocol.BATCH_OVERHEAD;
        for (int k = 0; k < lengths.length; k++) {
            e.entry(window, at[k], lengths[k]);
            expected += ClientProtocol.batchEntryLength(lengths[k]); // what a client sizes its batches by
        }
        int n = e.end();
        assertEquals(expected, n);
        assertEquals(ClientProtocol.BATCH_OVERHEAD + 4 * ClientProtocol.BATCH_ENTRY_OVERHEAD + 2137, n);
        AppendBatchDecoder d = new AppendBatchDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.APPEND_BATCH, 9, 6, n);
        assertEquals(3, d.queue());
        assertEquals(4, d.count());
        assertEquals(12, d.clientTerm());
        assertEquals(Long.MIN_VALUE, d.epoch());
        assertEquals(-2, d.firstSequence());
        int entry = d.firstEntry();
        for (int k = 0; k < lengths.length; k++) {
            assertEquals(lengths[k], d.envelopeLength(entry));
            byte[] tag = new byte[WriteTag.LENGTH];
            d.buffer().getBytes(d.writeTagOffset(entry), tag);
            assertArrayEquals(filled(WriteTag.LENGTH, 40 + k), tag);
            byte[] got = new byte[lengths[k]];
            d.buffer().getBytes(d.envelopeOffset(entry), got);
            assertArrayEquals(filled(lengths[k], k), got);
            entry = d.nextEntry(entry);
        }
        assertEquals(n - ClientProtocol.MAC_LENGTH, entry);
    }

    @Test
    void anAppendBatchWhoseEntriesDoNotFillItExactlyIsMalformed() throws Exception {
        ExpandableArrayBuffer window = new ExpandableArrayBuffer(256);
        AppendBatchEncoder e = new AppendBatchEncoder().wrap(out, AT).begin(9, 6, 3, 12, 5, 0);
        int n = e.entry(window, 0, 40).entry(window, 0, 40).end();
        assertEquals(2, new AppendBatchDecoder().wrap(out, AT, n).count());

        out.putInt(AT + ClientProtocol.HEADER_LENGTH + 24 + 60, 41, ClientProtocol.ORDER); // the second entry runs into the MAC
        assertEquals("APPEND_BATCH an entry's envelope: needs 41 bytes, 40 left", assertThrows(MalformedClientFrameException.class,
                () -> new AppendBatchDecoder().wrap(out, AT, n)).getMessage());
        out.putInt(AT + ClientProtocol.HEADER_LENGTH + 24 + 60, 39, ClientProtocol.ORDER); // a byte left before the MAC
        assertEquals("APPEND_BATCH body: 1 bytes after the last field", assertThrows(MalformedClientFrameException.class,
                () -> new AppendBatchDecoder().wrap(out, AT, n)).getMessage());
        out.putInt(AT + ClientProtocol.HEADER_LENGTH + 24 + 60, -1, ClientProtocol.ORDER);
        assertEquals("APPEND_BATCH entry 1 envelope length: negative", assertThrows(MalformedClientFrameException.class,
                () -> new AppendBatchDecoder().wrap(out, AT, n)).getMessage());
        out.putInt(AT + ClientProtocol.HEADER_LENGTH + 24 + 60, 40, ClientProtocol.ORDER);
        for (int count : new int[]{0, 3, ClientProtocol.MAX_BATCH_APPENDS + 1}) {
            out.putShort(AT + ClientProtocol.HEADER_LENGTH + 2, (short) count, ClientProtocol.ORDER);
            assertThrows(MalformedClientFrameException.class, () -> new AppendBatchDecoder().wrap(out, AT, n), "count " + count);
        }
        AppendBatchEncoder full = new AppendBatchEncoder().wrap(out, AT).begin(9, 6, 3, 12, 5, 0);
        for (int k = 0; k < ClientProtocol.MAX_BATCH_APPENDS; k++) {
            full.entry(window, 0, 1);
        }
        assertThrows(IllegalStateException.class, () -> full.entry(window, 0, 1));
        assertEquals(ClientProtocol.MAX_BATCH_APPENDS, new AppendBatchDecoder().wrap(out, AT, full.end()).count());
        assertThrows(IllegalStateException.class, () -> new AppendBatchEncoder().wrap(out, AT).begin(9, 6, 3, 12, 5, 0).end());
        assertEquals("APPEND_BATCH entry 0: envelope length -1 is negative", assertThrows(IllegalArgumentException.class,
                () -> new AppendBatchEncoder().wrap(out, AT).begin(9, 6, 3, 12, 5, 0).entry(window, 0, -1)).getMessage());
    }

    @Test
    void appendAckAndPendingRoundTrip() throws Exception {
        int n = new AppendAckEncoder().wrap(out, AT).encode(9, 7, 99, 5, 0x512b00000001L, 3);
        AppendAckDecoder ack = new AppendAckDecoder().wrap(out, AT, n);
        header(ack, ClientFrameType.APPEND_ACK, 9, 7, n);
        assertEquals(99, ack.epoch());
        assertEquals(5, ack.writerSequence());
        assertEquals(0x512b00000001L, ack.index());
        assertEquals(3, ack.term());
        assertEquals(1, ack.count());
        n = new AppendAckEncoder().wrap(out, AT).begin(9, 8, 99, 4).index(10).index(12).index(13).end(7);
        ack = new AppendAckDecoder().wrap(out, AT, n);
        header(ack, ClientFrameType.APPEND_ACK, 9, 8, n);
        assertEquals(3, ack.count());
        assertEquals(5, ack.firstSequence());
        assertEquals(7, ack.writerSequence());
        assertEquals(10, ack.index(0));
        assertEquals(12, ack.index(1));
        assertEquals(13, ack.index());
        assertEquals(4, ack.term());
        int runLength = n;
        out.putInt(AT + ClientProtocol.HEADER_LENGTH + 24, 0, ClientProtocol.ORDER);
        assertThrows(MalformedClientFrameException.class, () -> new AppendAckDecoder().wrap(out, AT, 24 + 32 + 16));
        out.putInt(AT + ClientProtocol.HEADER_LENGTH + 24, ClientProtocol.MAX_ACKS_PER_FRAME + 1, ClientProtocol.ORDER);
        assertThrows(MalformedClientFrameException.class, () -> new AppendAckDecoder().wrap(out, AT, runLength));
        n = new AppendPendingEncoder().wrap(out, AT).encode(9, 8, 98, 4, 0x512b00000002L, 2);
        AppendPendingDecoder pending = new AppendPendingDecoder().wrap(out, AT, n);
        header(pending, ClientFrameType.APPEND_PENDING, 9, 8, n);
        assertEquals(98, pending.epoch());
        assertEquals(4, pending.writerSequence());
        assertEquals(0x512b00000002L, pending.index());
        assertEquals(2, pending.term());
    }

    @Test
    void refusedRoundTripsEveryReasonAndCutsLongMessages() throws Exception {
        for (ClientRefusal reason : ClientRefusal.values()) {
            int n = new RefusedEncoder().wrap(out, AT).encode(9, 9, reason, 99, 5, 3, "127.0.0.1", 40122, "why: " + reason);
            RefusedDecoder d = new RefusedDecoder().wrap(out, AT, n);
            header(d, ClientFrameType.REFUSED, 9, 9, n);
            assertSame(reason, d.reason());
            assertEquals(99, d.epoch());
            assertEquals(5, d.writerSequence());
            assertEquals(3, d.term());
            assertEquals("127.0.0.1", d.leaderHost());
            assertEquals(40122, d.leaderPort());
            assertEquals("why: " + reason, d.message());
        }
        int n = new RefusedEncoder().wrap(out, AT).encode(9, 10, ClientRefusal.NO_LEADER, 0, 0, 0, "", 0, "x".repeat(5000));
        assertEquals(ClientProtocol.MAX_MESSAGE, new RefusedDecoder().wrap(out, AT, n).message().length());
    }

    @Test
    void tailOpenRoundTripsEveryFromAndMode() throws Exception {
        for (TailFrom from : TailFrom.values()) {
            for (TailMode mode : TailMode.values()) {
                int n = new TailOpenEncoder().wrap(out, AT).encode(9, 11, 2, from, mode, 256, 0x5eedL, 0x512b00000001L);
                TailOpenDecoder d = new TailOpenDecoder().wrap(out, AT, n);
                header(d, ClientFrameType.TAIL_OPEN, 9, 11, n);
                assertEquals(2, d.queue());
                assertSame(from, d.from());
                assertSame(mode, d.mode());
                assertEquals(256, d.credit());
                assertEquals(0x5eedL, d.tail());
                assertEquals(0x512b00000001L, d.index());
            }
        }
    }

    @Test
    void tailStatusRoundTripsEveryKind() throws Exception {
        for (TailStatusKind kind : TailStatusKind.values()) {
            int n = new TailStatusEncoder().wrap(out, AT).encode(9, 12, 0x5eedL, kind, -1, 10, 20, 15);
            TailStatusDecoder d = new TailStatusDecoder().wrap(out, AT, n);
            header(d, ClientFrameType.TAIL_STATUS, 9, 12, n);
            assertEquals(0x5eedL, d.tail());
            assertSame(kind, d.kind());
            assertEquals(-1, d.after());
            assertEquals(10, d.first());
            assertEquals(20, d.last());
            assertEquals(15, d.quorum());
        }
    }

    @Test
    void tailDataRoundTripsAroundItsPiece() throws Exception {
        byte[] piece = filled(40, 7);
        out.putBytes(AT + ClientProtocol.DATA_PIECE, piece);
        int n = new TailDataEncoder().wrap(out, AT).encodeAround(9, 13, 0x5eedL, 0x512b00000002L, 100, 60, piece.length);
        assertEquals(ClientProtocol.DATA_OVERHEAD + piece.length, n);
        TailDataDecoder d = new TailDataDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.TAIL_DATA, 9, 13, n);
        assertEquals(0x5eedL, d.tail());
        assertEquals(0x512b00000002L, d.index());
        assertEquals(100, d.total());
        assertEquals(60, d.pieceOffset());
        byte[] got = new byte[d.pieceLength()];
        d.buffer().getBytes(d.pieceAt(), got);
        assertArrayEquals(piece, got);
    }

    @Test
    void tailCreditRoundTrips() throws Exception {
        int n = new TailCreditEncoder().wrap(out, AT).encode(9, 14, 0x5eedL, 128);
        TailCreditDecoder d = new TailCreditDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.TAIL_CREDIT, 9, 14, n);
        assertEquals(0x5eedL, d.tail());
        assertEquals(128, d.grant());
    }

    @Test
    void tailEndRoundTrips() throws Exception {
        int n = new TailEndEncoder().wrap(out, AT).encode(9, 15, 0x5eedL, ClientRefusal.BEHIND_RETENTION, 10, 20, "gone");
        TailEndDecoder d = new TailEndDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.TAIL_END, 9, 15, n);
        assertEquals(0x5eedL, d.tail());
        assertSame(ClientRefusal.BEHIND_RETENTION, d.reason());
        assertEquals(10, d.first());
        assertEquals(20, d.last());
        assertEquals("gone", d.message());
    }

    @Test
    void claimRoundTripsAndVerifiesOnlyOnItsConnection() throws Exception {
        WriterClaim claim = WriterClaim.generate();
        byte[] clientNonce = new byte[ClientProtocol.NONCE_LENGTH];
        byte[] nodeNonce = new byte[ClientProtocol.NONCE_LENGTH];
        nodeNonce[0] = 1;
        int n = new ClaimEncoder().wrap(out, AT).encode(9, 16, claim.epoch(), claim.publicKey(), claim.sign(9, clientNonce, nodeNonce));
        ClaimDecoder d = new ClaimDecoder().wrap(out, AT, n);
        header(d, ClientFrameType.CLAIM, 9, 16, n);
        byte[] key = new byte[WriterClaim.PUBLIC_KEY_LENGTH];
        byte[] signature = new byte[WriterClaim.SIGNATURE_LENGTH];
        d.publicKey(key);
        d.signature(signature);
        assertEquals(claim.epoch(), d.epoch());
        assertEquals(WriterClaim.epochOf(key), d.epoch());
        assertTrue(io.queueenterprise.crypto.WriterEpochs.isRandom(d.epoch()));
        assertTrue(WriterClaim.verify(key, signature, d.epoch(), 9, clientNonce, nodeNonce));
        // captured and used elsewhere: another connection, other nonces, another epoch, another key
        assertFalse(WriterClaim.verify(key, signature, d.epoch(), 10, clientNonce, nodeNonce), "another connection");
        assertFalse(WriterClaim.verify(key, signature, d.epoch(), 9, nodeNonce, clientNonce), "other nonces");
        assertFalse(WriterClaim.verify(key, signature, d.epoch() ^ 1, 9, clientNonce, nodeNonce), "another epoch");
        assertFalse(WriterClaim.verify(WriterClaim.generate().publicKey(), signature, d.epoch(), 9, clientNonce, nodeNonce),
                "another key for the same epoch");
    }

    @Test
    void theHeaderDecoderReadsEveryTypeOnly() throws Exception {
        ClientFrameHeaderDecoder header = new ClientFrameHeaderDecoder();
        for (Map.Entry<ClientFrameType, byte[]> sample : ClientFrameSamples.byType().entrySet()) {
            header.wrap(new UnsafeBuffer(sample.getValue()), 0, sample.getValue().length);
            assertSame(sample.getKey(), header.type());
            assertEquals(7, header.connection());
        }
    }

    // ------------------------------------------------------------------------------------------------ refusals

    @Test
    void aDecoderRefusesAFrameOfAnotherTypeNamingBoth() {
        Map<ClientFrameType, Wrap> decoders = decoders();
        assertEquals(ClientFrameType.values().length, decoders.size());
        int refused = 0;
        for (Map.Entry<ClientFrameType, byte[]> sample : ClientFrameSamples.byType().entrySet()) {
            for (Map.Entry<ClientFrameType, Wrap> decoder : decoders.entrySet()) {
                byte[] frame = sample.getValue();
                if (decoder.getKey() == sample.getKey()) {
                    continue;
                }
                WrongClientFrameTypeException e = assertThrows(WrongClientFrameTypeException.class,
                        () -> decoder.getValue().wrap(new UnsafeBuffer(frame), 0, frame.length));
                assertSame(decoder.getKey(), e.expected());
                assertSame(sample.getKey(), e.actual());
                assertEquals("type: a " + decoder.getKey() + " decoder cannot read a " + sample.getKey() + " frame", e.getMessage());
                refused++;
            }
        }
        assertEquals(15 * 14, refused);
    }

    @Test
    void aFailedWrapLeavesNoType() throws Exception {
        byte[] ack = ClientFrameSamples.byType().get(ClientFrameType.APPEND_ACK);
        AppendPendingDecoder d = new AppendPendingDecoder();
        byte[] pending = ClientFrameSamples.byType().get(ClientFrameType.APPEND_PENDING);
        d.wrap(new UnsafeBuffer(pending), 0, pending.length);
        assertThrows(WrongClientFrameTypeException.class, () -> d.wrap(new UnsafeBuffer(ack), 0, ack.length));
        assertNull(d.type());
    }

    /**
     * No downgrade: a frame of the version before (or any other) is refused by every decoder, naming both versions,
     * before any field of it is read; a node counts it MALFORMED and answers nothing.
     */
    @Test
    void aFrameOfAnotherVersionIsRefusedByEveryDecoder() {
        Map<ClientFrameType, Wrap> decoders = decoders();
        for (Map.Entry<ClientFrameType, byte[]> sample : ClientFrameSamples.byType().entrySet()) {
            for (int version : new int[]{ClientProtocol.VERSION - 1, ClientProtocol.VERSION + 1, 0}) {
                byte[] frame = sample.getValue().clone();
                frame[0] = (byte) version;
                MalformedClientFrameException e = assertThrows(MalformedClientFrameException.class,
                        () -> new ClientFrameDecoders().wrap(new UnsafeBuffer(frame), 0, frame.length), sample.getKey() + " v" + version);
                assertEquals("version: " + version + ", this side speaks " + ClientProtocol.VERSION, e.getMessage());
                assertThrows(MalformedClientFrameException.class,
                        () -> decoders.get(sample.getKey()).wrap(new UnsafeBuffer(frame), 0, frame.length));
            }
        }
    }

    @Test
    void anUnknownFrameTypeCodeIsRefused() {
        byte[] frame = ClientFrameSamples.byType().get(ClientFrameType.PROOF).clone();
        frame[ClientProtocol.TYPE_OFFSET] = 16;
        UnknownProtocolCodeException e = assertThrows(UnknownProtocolCodeException.class,
                () -> new ClientFrameHeaderDecoder().wrap(new UnsafeBuffer(frame), 0, frame.length));
        assertEquals("type", e.field());
        assertEquals(16, e.code());
        assertEquals("type: unknown code 16", e.getMessage());
        assertThrows(UnknownProtocolCodeException.class, () -> new ProofDecoder().wrap(new UnsafeBuffer(frame), 0, frame.length));
    }

    @Test
    void everyEnumeratedFieldRefusesAnUnknownCode() {
        // type, byte offset of the code, an unknown code, the field the error names
        assertUnknown(ClientFrameType.CONNECTED, ClientProtocol.HEADER_LENGTH + 9, 3, "ack mode");
        assertUnknown(ClientFrameType.REFUSED, ClientProtocol.HEADER_LENGTH, 0, "refusal reason");
        assertUnknown(ClientFrameType.REFUSED, ClientProtocol.HEADER_LENGTH, 23, "refusal reason");
        assertUnknown(ClientFrameType.TAIL_OPEN, ClientProtocol.HEADER_LENGTH + 2, 4, "tail from");
        assertUnknown(ClientFrameType.TAIL_OPEN, ClientProtocol.HEADER_LENGTH + 3, 2, "tail mode");
        assertUnknown(ClientFrameType.TAIL_STATUS, ClientProtocol.HEADER_LENGTH + 8, 2, "tail status kind");
        assertUnknown(ClientFrameType.TAIL_END, ClientProtocol.HEADER_LENGTH + 8, 255, "tail end reason");
    }

    private static void assertUnknown(ClientFrameType type, int at, int code, String field) {
        byte[] frame = ClientFrameSamples.byType().get(type).clone();
        frame[at] = (byte) code;
        Wrap decoder = decoders().get(type);
        UnknownProtocolCodeException e = assertThrows(UnknownProtocolCodeException.class,
                () -> decoder.wrap(new UnsafeBuffer(frame), 0, frame.length), type + " " + field);
        assertSame(type, e.frameType());
        assertEquals(field, e.field());
        assertEquals(code, e.code());
        assertEquals(type + " " + field + ": unknown code " + code, e.getMessage());
    }

    @Test
    void everyTypeCutShortIsRefusedNamingTheFrameAndTheShortField() {
        for (Map.Entry<ClientFrameType, byte[]> sample : ClientFrameSamples.byType().entrySet()) {
            byte[] whole = sample.getValue();
            byte[] cut = Arrays.copyOf(whole, whole.length - 1); // one byte of the body missing (the MAC stays whole)
            new UnsafeBuffer(cut).putInt(ClientProtocol.LENGTH_OFFSET, cut.length, ClientProtocol.ORDER);
            Wrap decoder = decoders().get(sample.getKey());
            TruncatedClientFrameException e = assertThrows(TruncatedClientFrameException.class,
                    () -> decoder.wrap(new UnsafeBuffer(cut), 0, cut.length), sample.getKey().toString());
            assertSame(sample.getKey(), e.frameType());
            assertFalse(e.field().isEmpty());
            assertTrue(e.needed() > e.left(), e.getMessage());
            assertTrue(e.getMessage().startsWith(sample.getKey() + " " + e.field() + ": needs "), e.getMessage());
        }
    }

    @Test
    void aFrameShorterThanAHeaderIsTruncatedNamingTheTypeRead() {
        byte[] stub = Arrays.copyOf(ClientFrameSamples.byType().get(ClientFrameType.APPEND_ACK), 30);
        TruncatedClientFrameException e = assertThrows(TruncatedClientFrameException.class,
                () -> new AppendAckDecoder().wrap(new UnsafeBuffer(stub), 0, stub.length));
        assertEquals("APPEND_ACK header and MAC: needs 40 bytes, 30 left", e.getMessage());
    }

    @Test
    void bytesAfterTheLastFieldAreRefused() {
        byte[] whole = ClientFrameSamples.byType().get(ClientFrameType.TAIL_CREDIT);
        byte[] longer = Arrays.copyOf(whole, whole.length + 1);
        new UnsafeBuffer(longer).putInt(ClientProtocol.LENGTH_OFFSET, longer.length, ClientProtocol.ORDER);
        MalformedClientFrameException e = assertThrows(MalformedClientFrameException.class,
                () -> new TailCreditDecoder().wrap(new UnsafeBuffer(longer), 0, longer.length));
        assertEquals("TAIL_CREDIT body: 1 bytes after the last field", e.getMessage());
    }

    // ------------------------------------------------------------------------------------------------ code tables

    @Test
    void codeTablesLookUpByCodeNotOrdinal() {
        for (ClientFrameType t : ClientFrameType.values()) {
            assertSame(t, ClientFrameType.of(t.code()));
        }
        for (ClientRefusal r : ClientRefusal.values()) {
            assertSame(r, ClientRefusal.of(r.code()));
        }
        for (TailFrom f : TailFrom.values()) {
            assertSame(f, TailFrom.of(f.code()));
        }
        for (TailMode m : TailMode.values()) {
            assertSame(m, TailMode.of(m.code()));
        }
        for (TailStatusKind k : TailStatusKind.values()) {
            assertSame(k, TailStatusKind.of(k.code()));
        }
        for (ClientAckMode m : ClientAckMode.values()) {
            assertSame(m, ClientAckMode.of(m.code()));
        }
        assertNull(ClientRefusal.of(0));
        assertNull(ClientFrameType.of(0));
        assertNull(TailFrom.of(-1));
    }

    private static byte[] filled(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }
}
