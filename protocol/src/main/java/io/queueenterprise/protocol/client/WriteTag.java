package io.queueenterprise.protocol.client;

import io.queueenterprise.protocol.BufferHmac;
import io.queueenterprise.crypto.WriteKeys;
import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * The write-authorisation tag an APPEND carries: HMAC-SHA256 (first {@value #LENGTH} bytes) under the queue's write
 * key for the envelope's key version ({@link WriteKeys}), over a label and the whole envelope as sent (header with key
 * id, writer epoch and sequence; ciphertext; Poly1305 tag). A node appends an envelope only when the tag verifies:
 * the client proved it holds the queue's master key. Reusable, one thread at a time, allocation-free.
 */
public final class WriteTag {
    public static final int LENGTH = 16;
    private static final byte[] LABEL = "queue-enterprise/write-tag/v1".getBytes(StandardCharsets.US_ASCII);

    private final BufferHmac mac;

    /** Takes the write key {@code key} and zeroes the caller's array. */
    public WriteTag(byte[] key) {
        mac = new BufferHmac(key);
    }

    /** Writes the tag of the envelope {@code env[off, off + length)} to {@code out[outOff..]}. */
    public void sign(byte[] env, int off, int length, byte[] out, int outOff) {
        mac.start();
        mac.update(LABEL, 0, LABEL.length);
        mac.update(env, off, length);
        mac.finish();
        mac.copyTo(out, outOff, LENGTH);
    }

    /** Whether {@code buffer[tagAt, tagAt + LENGTH)} is the tag of the envelope {@code buffer[envAt, envAt + length)} (constant time). */
    public boolean verify(DirectBuffer buffer, int envAt, int length, int tagAt) {
        mac.start();
        mac.update(LABEL, 0, LABEL.length);
        mac.update(buffer, envAt, length);
        mac.finish();
        return mac.matches(buffer, tagAt, LENGTH);
    }

    public void destroy() {
        mac.destroy();
    }
}
