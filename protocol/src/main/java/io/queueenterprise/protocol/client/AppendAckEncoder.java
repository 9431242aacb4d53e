package io.queueenterprise.protocol.client;

/**
 * APPEND_ACK, node → client (session MAC): see {@link AppendAckDecoder}. One frame acknowledges a run of consecutive
 * writer sequences of one epoch: {@link #begin} the run, {@link #index} once per sequence in order, {@link #end}.
 * Allocation-free.
 */
public final class AppendAckEncoder extends ClientFrameEncoder<AppendAckEncoder> {
    private int count;

    public AppendAckEncoder() {
        super(ClientFrameType.APPEND_ACK);
    }

    /** Starts a run of acknowledgements of writer {@code epoch}, under the node's {@code term}. */
    public AppendAckEncoder begin(long connection, long sequence, long epoch, long term) {
        int at = begin(connection, sequence);
        i64(at, epoch);
        i32(at + 12, 0);
        i64(at + 16, term);
        i32(at + 28, 0);
        count = 0;
        return this;
    }

    /** The index of the run's next writer sequence (the run's first one, then each following one). */
    public AppendAckEncoder index(long index) {
        if (count == ClientProtocol.MAX_ACKS_PER_FRAME) {
            throw new IllegalStateException("an APPEND_ACK carries at most " + ClientProtocol.MAX_ACKS_PER_FRAME + " indexes");
        }
        i64(AppendAckDecoder.INDEXES + 8 * count, index);
        count++;
        return this;
    }

    /** Ends the run, whose last (highest) writer sequence is {@code highestSequence}; the frame's length, MAC to sign. */
    public int end(int highestSequence) {
        if (count == 0) {
            throw new IllegalStateException("an APPEND_ACK acknowledges at least one write");
        }
        i32(ClientProtocol.HEADER_LENGTH + 8, highestSequence);
        i32(ClientProtocol.HEADER_LENGTH + 24, count);
        return finish(AppendAckDecoder.INDEXES + 8 * count);
    }

    /** Indexes in the run so far. */
    public int count() {
        return count;
    }

    /** One acknowledgement: writer {@code epoch}'s {@code writerSequence} is at {@code index}. */
    public int encode(long connection, long sequence, long epoch, int writerSequence, long index, long term) {
        return begin(connection, sequence, epoch, term).index(index).end(writerSequence);
    }
}
