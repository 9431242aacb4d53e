package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * TAIL_END, node → client (session MAC): the tail ends, with a typed reason and the first and last index this node
 * holds.
 * <pre>i64 tail id, u8 reason ({@link ClientRefusal} code), 3 reserved 0, i64 first (-1: none), i64 last (-1: none),
 * u16 message length, message (UTF-8)</pre>
 */
public final class TailEndDecoder extends ClientFrameDecoder {
    private static final int TAIL = HEADER_LENGTH;
    private static final int REASON = HEADER_LENGTH + 8;
    private static final int FIRST = HEADER_LENGTH + 12;
    private static final int LAST = HEADER_LENGTH + 20;
    private static final int MESSAGE_LENGTH = HEADER_LENGTH + 28;

    private ClientRefusal reason;
    private int messageLength;

    public TailEndDecoder() {
        super(ClientFrameType.TAIL_END);
    }

    public TailEndDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, MESSAGE_LENGTH + 2 - HEADER_LENGTH, end, "tail, reason, first, last, message length");
        reason = ClientRefusal.of(u8(REASON));
        if (reason == null) {
            throw unknown("tail end reason", u8(REASON));
        }
        if ((u8(REASON + 1) | u16(REASON + 2)) != 0) {
            throw malformed("reserved", "not 0");
        }
        messageLength = u16(MESSAGE_LENGTH);
        return need(at, messageLength, end, "message");
    }

    public long tail() {
        return i64(TAIL);
    }

    public ClientRefusal reason() {
        return reason;
    }

    /** The first index the node holds (-1: none). */
    public long first() {
        return i64(FIRST);
    }

    /** The last index the node holds (-1: none). */
    public long last() {
        return i64(LAST);
    }

    public String message() {
        return utf8(MESSAGE_LENGTH + 2, messageLength);
    }
}
