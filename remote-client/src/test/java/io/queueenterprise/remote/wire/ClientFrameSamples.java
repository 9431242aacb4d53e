package io.queueenterprise.remote.wire;

import org.agrona.ExpandableArrayBuffer;

import java.util.ArrayList;
import java.util.List;

/** One valid frame of every client-facing type (the fuzz seeds are these bytes). */
final class ClientFrameSamples {
    private ClientFrameSamples() {
    }

    static List<byte[]> all() {
        List<byte[]> out = new ArrayList<>();
        ExpandableArrayBuffer b = new ExpandableArrayBuffer(512);
        byte[] n32 = new byte[32];
        for (int i = 0; i < 32; i++) {
            n32[i] = (byte) i;
        }
        out.add(copy(b, ClientFrame.encodeConnect(b, 7, n32, "orders", "127.0.0.1", 40120)));
        out.add(copy(b, ClientFrame.encodeChallenge(b, 7, 1, n32, n32, n32)));
        out.add(copy(b, ClientFrame.encodeProof(b, 7, 2, n32)));
        out.add(copy(b, ClientFrame.encodeConnected(b, 7, 2, 3, true, 2, 0, 262144, "127.0.0.1", 40121,
                "format=2\\nname=orders\\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))));
        byte[] envelope = new byte[48];
        envelope[0] = 2;
        envelope[1] = 2;
        b.putBytes(ClientFrame.APPEND_ENVELOPE, envelope);
        out.add(copy(b, ClientFrame.encodeAppendAround(b, 7, 3, 0, 3, 99, 5, envelope.length)));
        out.add(copy(b, ClientFrame.encodeAck(b, ClientFrameType.APPEND_ACK, 7, 3, 99, 5, 0x512b00000001L, 3)));
        out.add(copy(b, ClientFrame.encodeAck(b, ClientFrameType.APPEND_PENDING, 7, 4, 99, 5, 0x512b00000001L, 3)));
        out.add(copy(b, ClientFrame.encodeRefused(b, 7, 5, ClientRefusal.NOT_LEADER, 99, 5, 3, "127.0.0.1", 40122, "follows replica-1")));
        out.add(copy(b, ClientFrame.encodeTailOpen(b, 7, 6, 0, TailFrom.AFTER, TailMode.REPLICATED, 256, 0x5eedL, 0x512b00000001L)));
        out.add(copy(b, ClientFrame.encodeTailStatus(b, 7, 6, 0x5eedL, ClientFrame.STATUS_OPENED, 0x512b00000001L,
                0x512b00000000L, 0x512b00000009L, 0x512b00000008L)));
        b.putBytes(ClientFrame.DATA_PIECE, envelope, 0, 20);
        out.add(copy(b, ClientFrame.encodeTailDataAround(b, 7, 7, 0x5eedL, 0x512b00000002L, envelope.length, 20, 20)));
        out.add(copy(b, ClientFrame.encodeTailCredit(b, 7, 7, 0x5eedL, 128)));
        out.add(copy(b, ClientFrame.encodeTailEnd(b, 7, 8, 0x5eedL, ClientRefusal.INDEX_NOT_FOUND, 0x512b00000000L,
                0x512b00000009L, "no index 0x512b0000000a")));
        return out;
    }

    /** Writes the seeds as Jazzer's regression inputs (run once; the files are committed). */
    public static void main(String[] args) throws java.io.IOException {
        java.nio.file.Path dir = java.nio.file.Path.of(args[0]);
        java.nio.file.Files.createDirectories(dir);
        for (byte[] sample : all()) {
            java.nio.file.Files.write(dir.resolve("seed-" + ClientFrameType.of(sample[1]).name().toLowerCase(java.util.Locale.ROOT)), sample);
        }
    }

    private static byte[] copy(ExpandableArrayBuffer b, int length) {
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return out;
    }
}
