package io.queueenterprise.replication.wire;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Runs every decoder over one input and reads every field a successful decode offers: the oracle of the fuzz tests.
 * Returns how many decoders accepted it; anything thrown other than {@link MalformedFrameException} escapes.
 */
final class DecodeEverything {
    private final Frame frame = new Frame();
    private final HandshakeBody handshake = new HandshakeBody();
    private final HelloBody hello = new HelloBody();
    private final DescriptorBody descriptor = new DescriptorBody();
    private final DataBody data = new DataBody();
    private final ExcerptPartBody part = new ExcerptPartBody();
    private final AckBody ack = new AckBody();
    private final HeartbeatBody heartbeat = new HeartbeatBody();
    private final RefusalBody refusal = new RefusalBody();
    private final byte[] scratch = new byte[64];
    long sink;

    int decode(byte[] input, int offset, int length) {
        UnsafeBuffer buffer = new UnsafeBuffer(input);
        try {
            frame.wrap(buffer, offset, length);
        } catch (MalformedFrameException e) {
            return 0;
        }
        sink += frame.term() + frame.sessionId() + frame.sequence() + frame.sender() + frame.macOffset();
        int accepted = 1;
        try {
            handshake.wrap(frame);
            handshake.signature(scratch);
            if (frame.type() != FrameType.PROOF) {
                handshake.initiatorNonce(scratch);
                handshake.ephemeral(scratch);
            }
            if (frame.type() == FrameType.CHALLENGE_RESPONSE) {
                handshake.responderNonce(scratch);
            }
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            hello.wrap(frame);
            for (int q = 0; q < hello.queueCount(); q++) {
                sink += hello.queueName(q).length() + hello.lastIndex(q);
                for (int i = 0; i < hello.termCount(q); i++) {
                    sink += hello.term(q, i) + hello.previousLastIndex(q, i);
                }
            }
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            descriptor.wrap(frame);
            sink += descriptor.queue() + descriptor.resumeAfter() + descriptor.leaderFirstIndex();
            for (int i = 0; i < descriptor.termCount(); i++) {
                sink += descriptor.term(i) + descriptor.previousLastIndex(i);
            }
            byte[] d = descriptor.descriptor();
            sink += d == null ? 0 : d.length;
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            data.wrap(frame);
            int n = 0;
            while (data.next()) {
                n++;
                sink += data.index() + data.buffer().getByte(data.excerptOffset() + Math.max(0, data.excerptLength() - 1) * 0)
                        + data.excerptLength();
                if (data.excerptLength() > 0) {
                    sink += data.buffer().getByte(data.excerptOffset() + data.excerptLength() - 1);
                }
            }
            if (n != data.count()) {
                throw new AssertionError("DATA iterated " + n + " excerpts, count says " + data.count());
            }
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            part.wrap(frame);
            sink += part.queue() + part.quorumIndex() + part.index() + part.totalLength() + part.partOffset()
                    + part.buffer().getByte(part.bytesOffset()) + part.buffer().getByte(part.bytesOffset() + part.bytesLength() - 1)
                    + (part.isLast() ? 1 : 0);
            if (part.partOffset() + part.bytesLength() > part.totalLength()) {
                throw new AssertionError("EXCERPT_PART piece runs past its excerpt");
            }
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            ack.wrap(frame);
            sink += ack.queue() + ack.durableIndex() + ack.state().ordinal();
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            heartbeat.wrap(frame);
            for (int q = 0; q < heartbeat.count(); q++) {
                sink += heartbeat.lastIndex(q) + heartbeat.quorumIndex(q);
            }
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        try {
            refusal.wrap(frame);
            sink += refusal.message().length() + refusal.detail() + refusal.queue() + refusal.reason().code;
            accepted++;
        } catch (MalformedFrameException expected) {
            // refused: fine
        }
        return accepted;
    }
}
