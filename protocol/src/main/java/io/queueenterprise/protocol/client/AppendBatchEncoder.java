package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.MAX_BATCH_APPENDS;

/**
 * APPEND_BATCH, client → node (session MAC): see {@link AppendBatchDecoder}. {@link #begin} the batch, {@link #entry}
 * once per append in writer-sequence order (each copies its write tag and envelope in), {@link #end}. Allocation-free.
 */
public final class AppendBatchEncoder extends ClientFrameEncoder<AppendBatchEncoder> {
    private int count;
    private int at;

    public AppendBatchEncoder() {
        super(ClientFrameType.APPEND_BATCH);
    }

    /** Starts a batch of writer {@code epoch}'s appends from {@code firstSequence} on. */
    public AppendBatchEncoder begin(long connection, long sequence, int queue, long clientTerm, long epoch, int firstSequence) {
        int body = begin(connection, sequence);
        u16(body, queue);
        u16(body + 2, 0);
        i64(body + 4, clientTerm);
        i64(body + 12, epoch);
        i32(body + 20, firstSequence);
        count = 0;
        at = AppendBatchDecoder.ENTRIES;
        assert body == HEADER_LENGTH;
        return this;
    }

    /**
     * The next sequence's append: its write tag and then its envelope, as they lie together in {@code src} from
     * {@code tagAt} on (an APPEND frame's layout from {@link ClientProtocol#APPEND_WRITE_TAG}).
     */
    public AppendBatchEncoder entry(DirectBuffer src, int tagAt, int envelopeLength) {
        if (count == MAX_BATCH_APPENDS) {
            throw new IllegalStateException("an APPEND_BATCH carries at most " + MAX_BATCH_APPENDS + " appends");
        }
        if (envelopeLength < 0) {
            throw new IllegalArgumentException("APPEND_BATCH entry " + count + ": envelope length " + envelopeLength + " is negative");
        }
        i32(at, envelopeLength);
        buffer.putBytes(offset + at + 4, src, tagAt, WriteTag.LENGTH + envelopeLength);
        at += ClientProtocol.batchEntryLength(envelopeLength);
        count++;
        return this;
    }

    /** Ends the batch: the frame's length, MAC to sign. */
    public int end() {
        if (count == 0) {
            throw new IllegalStateException("an APPEND_BATCH carries at least one append");
        }
        u16(HEADER_LENGTH + 2, count);
        return finish(at);
    }
}
