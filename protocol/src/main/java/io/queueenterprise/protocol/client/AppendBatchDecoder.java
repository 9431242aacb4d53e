package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.MAX_BATCH_APPENDS;

/**
 * APPEND_BATCH, client → node (session MAC): consecutive appends of one writer epoch, the k-th (from 0) carrying writer
 * sequence {@code first + k}; a node takes them exactly as that many APPENDs in a row (each checked, appended or
 * refused on its own).
 * <pre>u16 queue position, u16 count (1..{@value ClientProtocol#MAX_BATCH_APPENDS}), i64 highest term the client has
 * seen a leader under, i64 writer epoch, i32 first writer sequence,
 * count × (i32 envelope length (&ge; 0), 16 write-authorisation tag ({@link WriteTag}), envelope)</pre>
 * Entries are read in order from {@link #firstEntry()}: {@link #envelopeLength(int)}, {@link #writeTagOffset(int)},
 * {@link #envelopeOffset(int)}, {@link #nextEntry(int)}.
 */
public final class AppendBatchDecoder extends ClientFrameDecoder {
    private static final int QUEUE = HEADER_LENGTH;
    private static final int COUNT = HEADER_LENGTH + 2;
    private static final int TERM = HEADER_LENGTH + 4;
    private static final int EPOCH = HEADER_LENGTH + 12;
    private static final int FIRST = HEADER_LENGTH + 20;
    /** Where the first entry starts in the frame. */
    static final int ENTRIES = HEADER_LENGTH + 24;

    public AppendBatchDecoder() {
        super(ClientFrameType.APPEND_BATCH);
    }

    public AppendBatchDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, ENTRIES - HEADER_LENGTH, end, "queue, count, term, epoch, first sequence");
        int count = u16(COUNT);
        if (count < 1 || count > MAX_BATCH_APPENDS) {
            throw malformed("count", count + " (1 to " + MAX_BATCH_APPENDS + ")");
        }
        for (int k = 0; k < count; k++) {
            // constant field names: a well-formed batch is decoded without allocating
            at = need(at, 4, end, "an entry's envelope length");
            int length = i32(at - 4);
            if (length < 0) {
                throw malformed("entry " + k + " envelope length", "negative");
            }
            at = need(at, WriteTag.LENGTH, end, "an entry's write tag");
            at = need(at, length, end, "an entry's envelope");
        }
        return at;
    }

    public int queue() {
        return u16(QUEUE);
    }

    public int count() {
        return u16(COUNT);
    }

    /** The highest term the client has seen a leader under. */
    public long clientTerm() {
        return i64(TERM);
    }

    public long epoch() {
        return i64(EPOCH);
    }

    /** The first entry's writer sequence; the k-th carries {@code firstSequence() + k}. */
    public int firstSequence() {
        return i32(FIRST);
    }

    /** The first entry, as a position relative to the frame (pass it to the entry accessors). */
    public int firstEntry() {
        return ENTRIES;
    }

    /** The entry after the one at {@code entry}. */
    public int nextEntry(int entry) {
        return entry + ClientProtocol.batchEntryLength(envelopeLength(entry));
    }

    public int envelopeLength(int entry) {
        return i32(entry);
    }

    /** Where the entry's write-authorisation tag lies in {@link #buffer()}. */
    public int writeTagOffset(int entry) {
        return offset + entry + 4;
    }

    /** Where the entry's envelope starts in {@link #buffer()}. */
    public int envelopeOffset(int entry) {
        return offset + entry + ClientProtocol.BATCH_ENTRY_OVERHEAD;
    }
}
