package io.queueenterprise.protocol.client;

import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.WriteKeys;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The write tag verifies over the envelope it was made for, on heap and off heap, and over nothing else. */
@Tag("unit")
class WriteTagTest {
    private static final byte[] MASTER = new byte[32];

    static {
        for (int i = 0; i < MASTER.length; i++) {
            MASTER[i] = (byte) (i * 7 + 1);
        }
    }

    @Test
    void aTagVerifiesOnlyOverItsEnvelopeUnderItsQueuesWriteKey() {
        byte[] env = new byte[10_000];
        for (int i = 0; i < env.length; i++) {
            env[i] = (byte) (i * 31);
        }
        byte[] frame = new byte[16 + env.length];
        new WriteTag(WriteKeys.derive(MasterKey.of(1, MASTER), "orders")).sign(env, 0, env.length, frame, 0);
        System.arraycopy(env, 0, frame, 16, env.length);
        WriteTag node = new WriteTag(WriteKeys.derive(MasterKey.of(1, MASTER), "orders"));
        assertTrue(node.verify(new UnsafeBuffer(frame), 16, env.length, 0));
        ByteBuffer direct = ByteBuffer.allocateDirect(frame.length);
        direct.put(frame).flip();
        assertTrue(node.verify(new UnsafeBuffer(direct), 16, env.length, 0), "off heap, in chunks");
        for (int bit : new int[]{0, 8 * 4, 8 * 8 + 3, 8 * 5000, 8 * env.length - 1}) {
            byte[] flipped = frame.clone();
            flipped[16 + bit / 8] ^= (byte) (1 << (bit % 8));
            assertFalse(node.verify(new UnsafeBuffer(flipped), 16, env.length, 0), "bit " + bit);
        }
        assertFalse(node.verify(new UnsafeBuffer(frame), 16, env.length - 1, 0), "a shorter envelope");
        assertFalse(new WriteTag(WriteKeys.derive(MasterKey.of(1, MASTER), "payments")).verify(new UnsafeBuffer(frame), 16,
                env.length, 0), "another queue's write key");
        byte[] other = MASTER.clone();
        other[0] ^= 1;
        assertFalse(new WriteTag(WriteKeys.derive(MasterKey.of(1, other), "orders")).verify(new UnsafeBuffer(frame), 16,
                env.length, 0), "another master key");
        assertFalse(Arrays.equals(WriteKeys.derive(MasterKey.of(1, MASTER), "orders"), MASTER), "derived, not the key");
    }
}
