package io.queueenterprise.remote;

import io.queueenterprise.protocol.client.ClientProtocol;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The appends of one {@link RemoteQueue} that are sealed and not yet settled, in writer-sequence order: their APPEND
 * frames (envelope and write tag in place; the header and MAC are written again for each send) in one byte ring, and
 * per append its writer sequence, correlation, deadline and, once acknowledged, its index. Bounded by count and by
 * bytes ({@link #hasRoom}); every append in it is of one writer epoch (a failure settles the whole window, and the
 * appender starts a new epoch after one). Allocation-free: the arrays are sized once. One thread.
 *
 * <p>Slots: {@code head} is the oldest unsettled append, {@code head + size - 1} the newest; {@code nextToSend} (an
 * offset from head) is the first one not (re)sent on the present connection.
 */
final class AppendWindow {
    /** The largest APPEND frame: an eighth of the client publication's term. */
    static final int MAX_FRAME = RemoteQueue.TERM_LENGTH / 8;
    static final long NO_INDEX = -1;

    private final int capacity;
    private final int maxBytes;
    private final UnsafeBuffer frames;
    private final int[] offsets;
    private final int[] envelopeLengths;
    private final int[] sequences;
    private final long[] correlations;
    private final long[] deadlines;
    private final long[] indexes;
    private final boolean[] sent;
    private final boolean[] blocking;
    private long epoch;
    private int head;
    private int size;
    /** Frame bytes of the appends in the window (the byte bound). */
    private int bytes;
    /** Where the byte ring's next frame goes, and where the oldest one starts. */
    private int writeAt;
    private int readAt;
    /** The first append not (re)sent on the present connection, as an offset from {@link #head}. */
    private int nextToSend;
    /** A slot reserved by {@link #reserve} and not yet {@link #commit}ted. */
    private int reservedOffset = -1;

    AppendWindow(int capacity, int maxBytes) {
        this.capacity = capacity;
        this.maxBytes = maxBytes;
        // room for maxBytes of frames, one frame beyond (the first is taken even when larger) and one wasted at the end
        this.frames = new UnsafeBuffer(new byte[Math.max(maxBytes, MAX_FRAME) + 2 * MAX_FRAME]);
        this.offsets = new int[capacity];
        this.envelopeLengths = new int[capacity];
        this.sequences = new int[capacity];
        this.correlations = new long[capacity];
        this.deadlines = new long[capacity];
        this.indexes = new long[capacity];
        this.sent = new boolean[capacity];
        this.blocking = new boolean[capacity];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int capacity() {
        return capacity;
    }

    int maxBytes() {
        return maxBytes;
    }

    int bytes() {
        return bytes;
    }

    long epoch() {
        return epoch;
    }

    /** Whether an APPEND frame of {@code frameLength} bytes fits now (the count, the byte bound, and the ring). */
    boolean hasRoom(int frameLength) {
        if (size == capacity) {
            return false;
        }
        if (size == 0) {
            return true;
        }
        return bytes + frameLength <= maxBytes && placeFor(frameLength) >= 0;
    }

    /** Where a frame of {@code length} bytes would go in the ring, or -1 when the oldest frames are in the way. */
    private int placeFor(int length) {
        if (size == 0) {
            return 0;
        }
        int end = frames.capacity();
        if (writeAt > readAt) {
            if (writeAt + length <= end) {
                return writeAt;
            }
            return length < readAt ? 0 : -1; // wrap, leaving the end unused
        }
        return writeAt + length < readAt ? writeAt : -1;
    }

    /** Reserves room for a frame of {@code frameLength} bytes ({@link #hasRoom} said yes); its offset in {@link #frames()}. */
    int reserve(int frameLength) {
        int at = placeFor(frameLength);
        if (at < 0 || size == capacity) {
            throw new IllegalStateException("no room in the append window");
        }
        if (size == 0) {
            readAt = 0;
        }
        reservedOffset = at;
        return at;
    }

    /** The byte ring the APPEND frames are in (the appender seals into a reserved slot). */
    UnsafeBuffer frames() {
        return frames;
    }

    /** Adds the reserved frame, sealed: writer {@code epoch}'s {@code sequence}, settled by {@code deadline}. */
    void commit(long epoch, int sequence, int envelopeLength, long correlation, boolean blockingWrite, long deadline) {
        int at = reservedOffset;
        reservedOffset = -1;
        if (size == 0) {
            this.epoch = epoch;
            nextToSend = 0;
        } else if (epoch != this.epoch) {
            throw new IllegalStateException("a window holds one writer epoch");
        }
        int slot = slot(size);
        offsets[slot] = at;
        envelopeLengths[slot] = envelopeLength;
        sequences[slot] = sequence;
        correlations[slot] = correlation;
        deadlines[slot] = deadline;
        indexes[slot] = NO_INDEX;
        sent[slot] = false;
        blocking[slot] = blockingWrite;
        int frameLength = ClientProtocol.APPEND_OVERHEAD + envelopeLength;
        writeAt = at + frameLength;
        bytes += frameLength;
        size++;
    }

    private int slot(int fromHead) {
        int s = head + fromHead;
        return s >= capacity ? s - capacity : s;
    }

    // ------------------------------------------------------------------------------------------------ sending

    /** Whether an append is waiting to be (re)sent on the present connection. */
    boolean hasUnsent() {
        return nextToSend < size;
    }

    /** The next append to send, as an offset from the head (see {@link #offset}, ...). */
    int nextToSend() {
        return nextToSend;
    }

    void markSent(int fromHead) {
        sent[slot(fromHead)] = true;
        nextToSend = fromHead + 1;
    }

    /** Sends everything again from the oldest unsettled append (a new connection, or the node went quiet). */
    void rewind() {
        nextToSend = 0;
    }

    /** Sends again from writer sequence {@code sequence} (the node expects it: a gap); false when it is not in the window. */
    boolean rewindTo(int sequence) {
        int fromHead = sequence - headSequence();
        if (size == 0 || fromHead < 0 || fromHead >= size) {
            return false;
        }
        if (fromHead < nextToSend) {
            nextToSend = fromHead;
        }
        return true;
    }

    int offset(int fromHead) {
        return offsets[slot(fromHead)];
    }

    int envelopeLength(int fromHead) {
        return envelopeLengths[slot(fromHead)];
    }

    int sequence(int fromHead) {
        return sequences[slot(fromHead)];
    }

    int headSequence() {
        return sequences[head];
    }

    long headDeadline() {
        return deadlines[head];
    }

    boolean wasSent(int fromHead) {
        return sent[slot(fromHead)];
    }

    // ------------------------------------------------------------------------------------------------ settling

    /** Records that writer sequence {@code sequence} of {@code epoch} is at {@code index}; false when not in the window. */
    boolean acknowledge(long epoch, int sequence, long index) {
        int fromHead = sequence - headSequence();
        if (size == 0 || epoch != this.epoch || fromHead < 0 || fromHead >= size) {
            return false;
        }
        indexes[slot(fromHead)] = index;
        return true;
    }

    /** Whether the oldest append is acknowledged (then {@link #headIndex}, and {@link #removeHead} settles it). */
    boolean headAcknowledged() {
        return size > 0 && indexes[head] != NO_INDEX;
    }

    long headIndex() {
        return indexes[head];
    }

    long headCorrelation() {
        return correlations[head];
    }

    boolean headBlocking() {
        return blocking[head];
    }

    boolean headSent() {
        return sent[head];
    }

    void removeHead() {
        bytes -= ClientProtocol.APPEND_OVERHEAD + envelopeLengths[head];
        head = head + 1 == capacity ? 0 : head + 1;
        size--;
        if (nextToSend > 0) {
            nextToSend--;
        }
        if (size == 0) {
            readAt = 0;
            writeAt = 0;
        } else {
            readAt = offsets[head];
        }
    }
}
