package io.queueenterprise.protocol.client;

import io.queueenterprise.crypto.HmacSha256;
import io.queueenterprise.crypto.WriteKeys;
import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The write-authorisation tag an APPEND carries: HMAC-SHA256 (first {@value #LENGTH} bytes) under the queue's write
 * key for the envelope's key version ({@link WriteKeys}), over a label and the whole envelope as sent (header with key
 * id, writer epoch and sequence; ciphertext; Poly1305 tag). A node appends an envelope only when the tag verifies:
 * the client proved it holds the queue's master key. Reusable, one thread at a time, allocation-free.
 */
public final class WriteTag {
    public static final int LENGTH = 16;
    private static final byte[] LABEL = "queue-enterprise/write-tag/v1".getBytes(StandardCharsets.US_ASCII);
    private static final int CHUNK = 4096;

    private final HmacSha256 mac;
    private final byte[] result = new byte[HmacSha256.LENGTH];
    private final byte[] chunk = new byte[CHUNK];

    /** Takes the write key {@code key} and zeroes the caller's array. */
    public WriteTag(byte[] key) {
        mac = new HmacSha256(key);
        Arrays.fill(key, (byte) 0);
    }

    /** Writes the tag of the envelope {@code env[off, off + length)} to {@code out[outOff..]}. */
    public void sign(byte[] env, int off, int length, byte[] out, int outOff) {
        mac.start();
        mac.update(LABEL, 0, LABEL.length);
        mac.update(env, off, length);
        mac.finish(result, 0);
        System.arraycopy(result, 0, out, outOff, LENGTH);
    }

    /** Whether {@code buffer[tagAt, tagAt + LENGTH)} is the tag of the envelope {@code buffer[envAt, envAt + length)} (constant time). */
    public boolean verify(DirectBuffer buffer, int envAt, int length, int tagAt) {
        mac.start();
        mac.update(LABEL, 0, LABEL.length);
        byte[] backing = buffer.byteArray();
        if (backing != null) {
            mac.update(backing, buffer.wrapAdjustment() + envAt, length);
        } else {
            for (int done = 0; done < length; done += CHUNK) {
                int n = Math.min(CHUNK, length - done);
                buffer.getBytes(envAt + done, chunk, 0, n);
                mac.update(chunk, 0, n);
            }
        }
        mac.finish(result, 0);
        int diff = 0;
        for (int i = 0; i < LENGTH; i++) {
            diff |= result[i] ^ buffer.getByte(tagAt + i);
        }
        return diff == 0;
    }

    public void destroy() {
        mac.destroy();
        Arrays.fill(result, (byte) 0);
        Arrays.fill(chunk, (byte) 0);
    }
}
