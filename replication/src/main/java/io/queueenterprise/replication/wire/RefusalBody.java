package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * REFUSAL: a typed reason, the queue it is about ({@value #NO_QUEUE}: none), a number that details it (e.g. the
 * receiver's term, or the leader's first index) and a short message for logs.
 * <pre>u16 reason, u16 queue, i64 detail, u16 message length (0..{@value #MAX_MESSAGE}), message (UTF-8)</pre>
 */
public final class RefusalBody {
    public static final int NO_QUEUE = 0xFFFF;
    public static final int MAX_MESSAGE = 512;

    private final BodyReader reader = new BodyReader();
    private DirectBuffer buffer;
    private RefusalReason reason;
    private int queue;
    private long detail;
    private int messageOffset;
    private int messageLength;

    public RefusalBody wrap(Frame frame) throws MalformedFrameException {
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        int code = reader.u16("reason");
        reason = RefusalReason.of(code);
        if (reason == null) {
            throw new MalformedFrameException("reason", "unknown reason " + code);
        }
        queue = reader.u16("queue");
        detail = reader.i64("detail");
        messageLength = reader.u16("messageLength");
        if (messageLength > MAX_MESSAGE) {
            throw new MalformedFrameException("messageLength", messageLength + " is more than " + MAX_MESSAGE);
        }
        messageOffset = reader.skip(messageLength, "message");
        reader.expectEnd("body");
        this.buffer = frame.buffer();
        return this;
    }

    public RefusalReason reason() {
        return reason;
    }

    public int queue() {
        return queue;
    }

    public long detail() {
        return detail;
    }

    public String message() {
        byte[] bytes = new byte[messageLength];
        buffer.getBytes(messageOffset, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
