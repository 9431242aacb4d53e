package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * REFUSED, node → client: refused with a typed reason; nothing was appended for it.
 * <pre>u8 reason ({@link ClientRefusal} code), u8 reserved, u16 leader port (0 when unknown), i64 writer epoch,
 * i32 writer sequence, i64 the node's term, u8 leader host length, leader host (ASCII), u16 message length,
 * message (UTF-8)</pre>
 */
public final class RefusedDecoder extends ClientFrameDecoder {
    private static final int REASON = HEADER_LENGTH;
    private static final int PORT = HEADER_LENGTH + 2;
    private static final int EPOCH = HEADER_LENGTH + 4;
    private static final int SEQUENCE = HEADER_LENGTH + 12;
    private static final int TERM = HEADER_LENGTH + 16;
    private static final int FIXED_END = HEADER_LENGTH + 24;

    private ClientRefusal reason;
    private int hostAt;
    private int hostLength;
    private int messageAt;
    private int messageLength;

    public RefusedDecoder() {
        super(ClientFrameType.REFUSED);
    }

    public RefusedDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, FIXED_END - HEADER_LENGTH, end, "reason, leader port, epoch, sequence, term");
        reason = ClientRefusal.of(u8(REASON));
        if (reason == null) {
            throw unknown("refusal reason", u8(REASON));
        }
        need(at, 1, end, "leader host length");
        hostLength = u8(at++);
        hostAt = at;
        at = need(at, hostLength, end, "leader host");
        at = need(at, 2, end, "message length");
        messageLength = u16(at - 2);
        messageAt = at;
        return need(at, messageLength, end, "message");
    }

    public ClientRefusal reason() {
        return reason;
    }

    public long epoch() {
        return i64(EPOCH);
    }

    public int writerSequence() {
        return i32(SEQUENCE);
    }

    /** The refusing node's term. */
    public long term() {
        return i64(TERM);
    }

    /** The leader's client host ("" when unknown). */
    public String leaderHost() {
        return ascii(hostAt, hostLength);
    }

    /** The leader's client port (0 when unknown). */
    public int leaderPort() {
        return u16(PORT);
    }

    public String message() {
        return utf8(messageAt, messageLength);
    }
}
