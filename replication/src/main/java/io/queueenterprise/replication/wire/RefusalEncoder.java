package io.queueenterprise.replication.wire;

/** Writes a REFUSAL body ({@link RefusalBody}'s layout); the message is cut to {@link RefusalBody#MAX_MESSAGE} bytes. */
public final class RefusalEncoder {
    /** {@code queue}: {@link RefusalBody#NO_QUEUE} when about none. */
    public FrameEncoder encode(FrameEncoder out, RefusalReason reason, int queue, long detail, String message) {
        return out.u16(reason.code).u16(queue).i64(detail).message(message);
    }
}
