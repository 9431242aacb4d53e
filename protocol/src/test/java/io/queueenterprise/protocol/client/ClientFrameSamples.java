package io.queueenterprise.protocol.client;

import org.agrona.ExpandableArrayBuffer;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One valid frame of every client-facing type (the fuzz seeds are these bytes, written by the wire format's first
 * encoder: {@link ClientFrameWireBytesTest} holds the encoders to them).
 */
final class ClientFrameSamples {
    static final byte[] N32 = new byte[32];
    static final byte[] ENVELOPE = new byte[48];
    static final byte[] DESCRIPTOR = "format=2\\nname=orders\\n".getBytes(StandardCharsets.US_ASCII);

    static {
        for (int i = 0; i < 32; i++) {
            N32[i] = (byte) i;
        }
        ENVELOPE[0] = 2;
        ENVELOPE[1] = 2;
    }

    private ClientFrameSamples() {
    }

    /** By type, in code order. */
    static Map<ClientFrameType, byte[]> byType() {
        Map<ClientFrameType, byte[]> out = new LinkedHashMap<>();
        ExpandableArrayBuffer b = new ExpandableArrayBuffer(512);
        out.put(ClientFrameType.CONNECT, copy(b, new ConnectEncoder().wrap(b, 0).encode(7, N32, N32, "orders", "127.0.0.1", 40120,
                "orders-writer")));
        out.put(ClientFrameType.CHALLENGE, copy(b, new ChallengeEncoder().wrap(b, 0).encode(7, 1, N32, N32, N32, N32)));
        out.put(ClientFrameType.PROOF, copy(b, new ProofEncoder().wrap(b, 0).encode(7, 2, N32, new byte[64])));
        out.put(ClientFrameType.CONNECTED, copy(b, new ConnectedEncoder().wrap(b, 0).encode(7, 2, 3, true, ClientAckMode.QUORUM,
                0, 262144, "127.0.0.1", 40121, DESCRIPTOR)));
        b.putBytes(ClientProtocol.APPEND_ENVELOPE, ENVELOPE);
        out.put(ClientFrameType.APPEND, copy(b, new AppendEncoder().wrap(b, 0).encodeAround(7, 3, 0, 3, 99, 5, ENVELOPE.length)));
        out.put(ClientFrameType.APPEND_ACK, copy(b, new AppendAckEncoder().wrap(b, 0).begin(7, 3, 99, 3)
                .index(0x512b00000001L).index(0x512b00000004L).index(0x512b00000005L).end(7)));
        out.put(ClientFrameType.APPEND_PENDING, copy(b, new AppendPendingEncoder().wrap(b, 0).encode(7, 4, 99, 5, 0x512b00000001L, 3)));
        out.put(ClientFrameType.REFUSED, copy(b, new RefusedEncoder().wrap(b, 0).encode(7, 5, ClientRefusal.NOT_LEADER, 99, 5, 3,
                "127.0.0.1", 40122, "follows replica-1")));
        out.put(ClientFrameType.TAIL_OPEN, copy(b, new TailOpenEncoder().wrap(b, 0).encode(7, 6, 0, TailFrom.AFTER,
                TailMode.REPLICATED, 256, 0x5eedL, 0x512b00000001L)));
        out.put(ClientFrameType.TAIL_STATUS, copy(b, new TailStatusEncoder().wrap(b, 0).encode(7, 6, 0x5eedL, TailStatusKind.OPENED,
                0x512b00000001L, 0x512b00000000L, 0x512b00000009L, 0x512b00000008L)));
        b.putBytes(ClientProtocol.DATA_PIECE, ENVELOPE, 0, 20);
        out.put(ClientFrameType.TAIL_DATA, copy(b, new TailDataEncoder().wrap(b, 0).encodeAround(7, 7, 0x5eedL, 0x512b00000002L,
                ENVELOPE.length, 20, 20)));
        out.put(ClientFrameType.TAIL_CREDIT, copy(b, new TailCreditEncoder().wrap(b, 0).encode(7, 7, 0x5eedL, 128)));
        out.put(ClientFrameType.TAIL_END, copy(b, new TailEndEncoder().wrap(b, 0).encode(7, 8, 0x5eedL, ClientRefusal.INDEX_NOT_FOUND,
                0x512b00000000L, 0x512b00000009L, "no index 0x512b0000000a")));
        byte[] n64 = new byte[WriterClaim.SIGNATURE_LENGTH];
        System.arraycopy(N32, 0, n64, 0, 32);
        System.arraycopy(N32, 0, n64, 32, 32);
        out.put(ClientFrameType.CLAIM, copy(b, new ClaimEncoder().wrap(b, 0).encode(7, 9, 0x8000000000000099L, N32, n64)));
        ExpandableArrayBuffer appends = new ExpandableArrayBuffer(256);
        appends.putBytes(ClientProtocol.APPEND_WRITE_TAG, N32, 0, WriteTag.LENGTH);
        appends.putBytes(ClientProtocol.APPEND_ENVELOPE, ENVELOPE);
        out.put(ClientFrameType.APPEND_BATCH, copy(b, new AppendBatchEncoder().wrap(b, 0).begin(7, 10, 0, 3, 99, 5)
                .entry(appends, ClientProtocol.APPEND_WRITE_TAG, ENVELOPE.length)
                .entry(appends, ClientProtocol.APPEND_WRITE_TAG, 20).end()));
        return out;
    }

    static java.util.List<byte[]> all() {
        return java.util.List.copyOf(byType().values());
    }

    /** Writes the seeds as Jazzer's regression inputs (the committed ones came from the first encoder). */
    public static void main(String[] args) throws java.io.IOException {
        java.nio.file.Path dir = java.nio.file.Path.of(args[0]);
        java.nio.file.Files.createDirectories(dir);
        for (Map.Entry<ClientFrameType, byte[]> sample : byType().entrySet()) {
            java.nio.file.Files.write(dir.resolve(seedName(sample.getKey())), sample.getValue());
        }
    }

    static String seedName(ClientFrameType type) {
        return "seed-" + type.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static byte[] copy(ExpandableArrayBuffer b, int length) {
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return out;
    }
}
