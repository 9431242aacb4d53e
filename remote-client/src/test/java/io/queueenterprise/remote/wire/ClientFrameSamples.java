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
        return out;
    }

    private static byte[] copy(ExpandableArrayBuffer b, int length) {
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return out;
    }
}
