package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.MAX_DESCRIPTOR;

/**
 * CONNECTED, node → client (session MAC): the session is open; the node's term, whether it leads, the leader's client
 * address, the queue descriptor.
 * <pre>i64 term, u8 leads (0 or 1), u8 ack mode ({@link ClientAckMode} code), u16 queue position, i32 max envelope
 * (&ge; 0), u8 leader host length, leader host (ASCII, empty when unknown), u16 leader port (0 when unknown),
 * i32 descriptor length (0..{@value ClientProtocol#MAX_DESCRIPTOR}), descriptor</pre>
 */
public final class ConnectedDecoder extends ClientFrameDecoder {
    private static final int TERM = HEADER_LENGTH;
    private static final int LEADS = HEADER_LENGTH + 8;
    private static final int ACK_MODE = HEADER_LENGTH + 9;
    private static final int QUEUE = HEADER_LENGTH + 10;
    private static final int MAX_ENVELOPE = HEADER_LENGTH + 12;
    private static final int FIXED_END = HEADER_LENGTH + 16;

    private ClientAckMode ackMode;
    private int hostAt;
    private int hostLength;
    private int portAt;
    private int descriptorAt;
    private int descriptorLength;

    public ConnectedDecoder() {
        super(ClientFrameType.CONNECTED);
    }

    public ConnectedDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, FIXED_END - HEADER_LENGTH, end, "term, leads, ack mode, queue, max envelope");
        if (u8(LEADS) > 1) {
            throw malformed("leads", "not 0 or 1");
        }
        ackMode = ClientAckMode.of(u8(ACK_MODE));
        if (ackMode == null) {
            throw unknown("ack mode", u8(ACK_MODE));
        }
        if (maxEnvelope() < 0) {
            throw malformed("max envelope", "negative");
        }
        need(at, 1, end, "leader host length");
        hostLength = u8(at++);
        hostAt = at;
        at = need(at, hostLength, end, "leader host");
        portAt = at;
        at = need(at, 2, end, "leader port");
        need(at, 4, end, "descriptor length");
        descriptorLength = i32(at);
        at += 4;
        if (descriptorLength < 0 || descriptorLength > MAX_DESCRIPTOR) {
            throw malformed("descriptor length", descriptorLength + " outside 0.." + MAX_DESCRIPTOR);
        }
        descriptorAt = at;
        return need(at, descriptorLength, end, "descriptor");
    }

    /** The node's term. */
    public long term() {
        return i64(TERM);
    }

    /** Whether this node leads the queue. */
    public boolean leads() {
        return u8(LEADS) == 1;
    }

    public ClientAckMode ackMode() {
        return ackMode;
    }

    /** The queue's position on the node (APPEND and TAIL_OPEN name it). */
    public int queue() {
        return u16(QUEUE);
    }

    /** The largest envelope the node takes from a client. */
    public int maxEnvelope() {
        return i32(MAX_ENVELOPE);
    }

    /** The leader's client host ("" when unknown). */
    public String leaderHost() {
        return ascii(hostAt, hostLength);
    }

    /** The leader's client port (0 when unknown). */
    public int leaderPort() {
        return u16(portAt);
    }

    /** The queue descriptor's bytes (empty when the queue has none). */
    public byte[] descriptor() {
        byte[] out = new byte[descriptorLength];
        bytes(descriptorAt, out, descriptorLength);
        return out;
    }
}
