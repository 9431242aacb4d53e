package io.queueenterprise.protocol;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The trailer is HMAC-SHA256's first bytes over the frame, whether the frame lies on the heap or off it (in chunks). */
@Tag("unit")
class FrameTrailerMacTest {
    private static final byte[] KEY = new byte[32];

    static {
        Arrays.fill(KEY, (byte) 9);
    }

    @Test
    void offHeapAndHeapFramesGetTheJdkHmacAcrossChunkBoundaries() throws Exception {
        FrameTrailerMac mac = new FrameTrailerMac(KEY.clone());
        Mac jdk = Mac.getInstance("HmacSHA256");
        jdk.init(new SecretKeySpec(KEY, "HmacSHA256"));
        Random random = new Random(1);
        int chunk = FrameTrailerMac.CHUNK;
        int[] bodies = {0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk + 7, 64 * 1024};
        for (int body : bodies) {
            byte[] frame = new byte[body + FrameTrailerMac.LENGTH];
            random.nextBytes(frame);
            jdk.update(frame, 0, body);
            byte[] expected = Arrays.copyOf(jdk.doFinal(), FrameTrailerMac.LENGTH);
            for (UnsafeBuffer b : new UnsafeBuffer[]{
                    new UnsafeBuffer(new byte[frame.length + 3]),
                    new UnsafeBuffer(new byte[frame.length + 10], 7, frame.length + 3), // a view into the array
                    new UnsafeBuffer(ByteBuffer.allocateDirect(frame.length + 3))}) {
                b.putBytes(3, frame);
                mac.sign(b, 3, frame.length);
                byte[] trailer = new byte[FrameTrailerMac.LENGTH];
                b.getBytes(3 + body, trailer);
                String where = (b.byteArray() != null ? "heap (at " + b.wrapAdjustment() + ")" : "off-heap") + " frame of "
                        + body + " bytes";
                assertArrayEquals(expected, trailer, where);
                assertTrue(mac.verify(b, 3, frame.length), where);
                if (body > 0) {
                    b.putByte(3 + body - 1, (byte) (b.getByte(3 + body - 1) ^ 1)); // the last byte of the last chunk
                    assertFalse(mac.verify(b, 3, frame.length), where + ", last byte changed");
                }
            }
        }
    }
}
