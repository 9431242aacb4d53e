package io.queueenterprise.replication.engine;

import io.aeron.Publication;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.MalformedFrameException;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fake peer publication for the sessions' unit tests: keeps a copy of every frame it takes, and answers the offers
 * it is told to refuse as a publication would ({@link Publication#BACK_PRESSURED}, {@link Publication#NOT_CONNECTED},
 * {@link Publication#MAX_POSITION_EXCEEDED}...), one scripted answer per offer, then takes everything again.
 */
final class RecordingSink implements FrameSink {
    private final List<byte[]> taken = new ArrayList<>();
    private final List<byte[]> refused = new ArrayList<>();
    private final ArrayDeque<Long> answers = new ArrayDeque<>();
    private long position;

    @Override
    public long offer(DirectBuffer buffer, int offset, int length) {
        byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        Long answer = answers.poll();
        if (answer != null) {
            refused.add(copy);
            return answer;
        }
        taken.add(copy);
        position += length;
        return position;
    }

    /** The next {@code times} offers are answered {@code result} (a negative Publication code) and not taken. */
    RecordingSink refuse(long result, int times) {
        for (int i = 0; i < times; i++) {
            answers.add(result);
        }
        return this;
    }

    /** The frames taken so far, oldest first. */
    List<byte[]> taken() {
        return taken;
    }

    /** The frames offered and refused so far, oldest first. */
    List<byte[]> refused() {
        return refused;
    }

    /** The frames taken since the first {@code from}, decoded. */
    List<Frame> takenSince(int from) throws MalformedFrameException {
        List<Frame> frames = new ArrayList<>();
        for (int i = from; i < taken.size(); i++) {
            frames.add(decode(taken.get(i)));
        }
        return frames;
    }

    static Frame decode(byte[] bytes) throws MalformedFrameException {
        return new Frame().wrap(new UnsafeBuffer(bytes), 0, bytes.length);
    }

    /**
     * Every frame taken is a session frame of {@code sessionId} from {@code sender} at {@code term}, MACed under
     * {@code mac} (the receiver's view of the sender's direction) and not under {@code otherDirection}, with strictly
     * increasing sequence numbers in the order taken (a receiver drops any frame not above the last it took). {@code
     * consecutive}: 1, 2, 3... with no gap either, which holds while no control frame was lost (a lost control frame
     * keeps the sequence it was given; DATA takes its sequence only when the publication takes the frame).
     */
    void assertSessionFrames(int sender, long term, long sessionId, SessionCrypto.FrameMac mac,
                             SessionCrypto.FrameMac otherDirection, boolean consecutive) throws MalformedFrameException {
        long previous = 0;
        int n = 1;
        for (Frame f : takenSince(0)) {
            String what = f.type() + " #" + n++;
            assertEquals(sender, f.sender(), what);
            assertEquals(term, f.term(), what);
            assertEquals(sessionId, f.sessionId(), what);
            if (consecutive) {
                assertEquals(previous + 1, f.sequence(), what + ": the session's next sequence");
            } else {
                assertTrue(f.sequence() > previous, what + ": sequence " + f.sequence() + " not above " + previous);
            }
            previous = f.sequence();
            assertTrue(mac.verify(f), what + ": MACed under the session key of the sender's direction");
            assertTrue(!otherDirection.verify(f), what + ": not under the other direction's key");
        }
    }

    List<FrameType> types() throws MalformedFrameException {
        List<FrameType> types = new ArrayList<>();
        for (Frame f : takenSince(0)) {
            types.add(f.type());
        }
        return types;
    }
}
