package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * APPEND_ACK, node → client (session MAC): the queue's ack mode is met for a run of consecutive writer sequences of
 * one epoch, ending at {@link #writerSequence()} (the highest), each at its index. The node coalesces: one frame per
 * connection and run per duty cycle instead of one per write (cumulative, as the highest sequence it covers).
 * <pre>i64 writer epoch, i32 highest writer sequence, i32 reserved, i64 the node's term, i32 count (1..{@value
 * ClientProtocol#MAX_ACKS_PER_FRAME}), i32 reserved, count × i64 index (of sequences highest - count + 1 .. highest)</pre>
 */
public final class AppendAckDecoder extends ClientFrameDecoder {
    private static final int EPOCH = HEADER_LENGTH;
    private static final int HIGHEST = HEADER_LENGTH + 8;
    private static final int TERM = HEADER_LENGTH + 16;
    private static final int COUNT = HEADER_LENGTH + 24;
    static final int INDEXES = HEADER_LENGTH + 32;

    public AppendAckDecoder() {
        super(ClientFrameType.APPEND_ACK);
    }

    public AppendAckDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, INDEXES - HEADER_LENGTH, end, "epoch, highest sequence, term, count");
        int count = count();
        if (count < 1 || count > ClientProtocol.MAX_ACKS_PER_FRAME) {
            throw malformed("count", count + " is not in 1.." + ClientProtocol.MAX_ACKS_PER_FRAME);
        }
        return need(at, 8 * count, end, "indexes");
    }

    public long epoch() {
        return i64(EPOCH);
    }

    /** The highest writer sequence acknowledged (the run's last). */
    public int writerSequence() {
        return i32(HIGHEST);
    }

    /** The run's first writer sequence. */
    public int firstSequence() {
        return writerSequence() - count() + 1;
    }

    public long term() {
        return i64(TERM);
    }

    /** Writes acknowledged by this frame. */
    public int count() {
        return i32(COUNT);
    }

    /** The index of the run's {@code i}-th write (0: {@link #firstSequence()}). */
    public long index(int i) {
        return i64(INDEXES + 8 * i);
    }

    /** The index of the highest writer sequence. */
    public long index() {
        return index(count() - 1);
    }
}
