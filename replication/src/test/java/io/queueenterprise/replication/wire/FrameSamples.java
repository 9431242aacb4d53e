package io.queueenterprise.replication.wire;

import org.agrona.ExpandableArrayBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** One valid frame of every type (MAC trailer zero), the seeds of the decoder fuzzing. */
final class FrameSamples {
    private FrameSamples() {
    }

    static List<byte[]> all() {
        List<byte[]> samples = new ArrayList<>();
        FrameEncoder e = new FrameEncoder();
        ExpandableArrayBuffer b = new ExpandableArrayBuffer(256);
        byte[] nonce = new byte[32];
        Arrays.fill(nonce, (byte) 7);
        byte[] ephemeral = new byte[32];
        Arrays.fill(ephemeral, (byte) 8);
        byte[] signature = new byte[64];
        Arrays.fill(signature, (byte) 9);
        samples.add(finish(b, e.begin(b, 0, FrameType.CHALLENGE, 1, 2, 77, 0).bytes(nonce, 0, 32).bytes(ephemeral, 0, 32)
                .bytes(signature, 0, 64)));
        samples.add(finish(b, e.begin(b, 0, FrameType.CHALLENGE_RESPONSE, 0, 2, 77, 0)
                .bytes(nonce, 0, 32).bytes(nonce, 0, 32).bytes(ephemeral, 0, 32).bytes(signature, 0, 64)));
        samples.add(finish(b, e.begin(b, 0, FrameType.PROOF, 1, 2, 77, 0).bytes(signature, 0, 64)));
        samples.add(finish(b, e.begin(b, 0, FrameType.HELLO, 1, 2, 77, 1).u16(2)
                .shortString("orders").i64(41).u16(2).i64(1).i64(-1).i64(2).i64(30)
                .shortString("fills").i64(-1).u16(0)));
        samples.add(finish(b, e.begin(b, 0, FrameType.DESCRIPTOR, 0, 2, 77, 1).u16(0).i64(30).i64(0).u16(1).i64(2).i64(30)
                .i32(5).bytes("x=1\n\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 5)));
        samples.add(finish(b, e.begin(b, 0, FrameType.DATA, 0, 2, 77, 2).u16(0).u16(0).i32(2).i64(31)
                .i64(31).i32(3).bytes(new byte[]{1, 2, 3}, 0, 3).i64(32).i32(0)));
        samples.add(finish(b, e.begin(b, 0, FrameType.EXCERPT_PART, 0, 2, 77, 3).u16(0).u16(0).i64(31).i64(33).i32(5).i32(2)
                .bytes(new byte[]{3, 4, 5}, 0, 3)));
        samples.add(finish(b, e.begin(b, 0, FrameType.ACK, 1, 2, 77, 2).u16(0).u8(0).i64(32)));
        samples.add(finish(b, e.begin(b, 0, FrameType.HEARTBEAT, 0, 2, 77, 3).i64(123456789L).u16(1).i64(32).i64(31)));
        samples.add(finish(b, e.begin(b, 0, FrameType.REFUSAL, 0, 2, 77, 4).u16(RefusalReason.STALE_TERM.code)
                .u16(RefusalBody.NO_QUEUE).i64(3).message("stale")));
        return samples;
    }

    private static byte[] finish(ExpandableArrayBuffer b, FrameEncoder e) {
        int length = e.finish();
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return out;
    }

    /** Writes the seeds as Jazzer's regression inputs (run once; the files are committed). */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        List<byte[]> samples = all();
        for (int i = 0; i < samples.size(); i++) {
            Files.write(dir.resolve("seed-" + FrameType.of(samples.get(i)[1]).name().toLowerCase(java.util.Locale.ROOT)), samples.get(i));
        }
    }
}
