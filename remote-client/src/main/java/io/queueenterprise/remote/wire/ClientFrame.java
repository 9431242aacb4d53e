package io.queueenterprise.remote.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Flyweight over one client-facing frame (version {@value #VERSION}), little-endian:
 *
 * <pre>
 *  0  u8   version
 *  1  u8   type ({@link ClientFrameType})
 *  2  u16  reserved, 0
 *  4  i32  frame length, header and MAC included
 *  8  i64  connection id (chosen at random by the client for one connection)
 * 16  i64  sequence, strictly increasing per connection and direction
 * 24  ...  body (per type, see the accessors)
 *  n  16   MAC: HMAC-SHA256 (first 16 bytes) under the handshake key (CONNECT, CHALLENGE, PROOF, refusals before a
 *          session) or the session key
 * </pre>
 *
 * {@link #wrap} checks the header and the whole body of the type (every length against the frame's bounds) and
 * throws only {@link MalformedClientFrameException}; accessors then read without further checks.
 */
public final class ClientFrame {
    public static final int VERSION = 1;
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    public static final int HEADER_LENGTH = 24;
    public static final int MAC_LENGTH = FrameTrailerMac.LENGTH;
    public static final int NONCE_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;
    public static final int MAX_DESCRIPTOR = 64 * 1024;
    public static final int MAX_FRAME = 16 * 1024 * 1024;
    public static final int NO_QUEUE = 0xFFFF;

    static final int TYPE_OFFSET = 1;
    static final int LENGTH_OFFSET = 4;
    public static final int CONNECTION_OFFSET = 8;
    public static final int SEQUENCE_OFFSET = 16;

    // APPEND body
    static final int APPEND_QUEUE = HEADER_LENGTH;
    static final int APPEND_TERM = HEADER_LENGTH + 4;
    static final int APPEND_EPOCH = HEADER_LENGTH + 12;
    static final int APPEND_SEQUENCE = HEADER_LENGTH + 20;
    static final int APPEND_LENGTH = HEADER_LENGTH + 24;
    public static final int APPEND_ENVELOPE = HEADER_LENGTH + 28;
    /** Bytes an APPEND adds around its envelope. */
    public static final int APPEND_OVERHEAD = APPEND_ENVELOPE + MAC_LENGTH;

    // APPEND_ACK / APPEND_PENDING body
    static final int ACK_EPOCH = HEADER_LENGTH;
    static final int ACK_SEQUENCE = HEADER_LENGTH + 8;
    static final int ACK_INDEX = HEADER_LENGTH + 12;
    static final int ACK_TERM = HEADER_LENGTH + 20;
    static final int ACK_END = HEADER_LENGTH + 28;

    // TAIL_OPEN body
    static final int OPEN_QUEUE = HEADER_LENGTH;
    static final int OPEN_FROM = HEADER_LENGTH + 2;
    static final int OPEN_MODE = HEADER_LENGTH + 3;
    static final int OPEN_CREDIT = HEADER_LENGTH + 4;
    static final int OPEN_TAIL = HEADER_LENGTH + 8;
    static final int OPEN_INDEX = HEADER_LENGTH + 16;
    static final int OPEN_END = HEADER_LENGTH + 24;

    // TAIL_STATUS body
    static final int STATUS_TAIL = HEADER_LENGTH;
    static final int STATUS_KIND = HEADER_LENGTH + 8;
    static final int STATUS_AFTER = HEADER_LENGTH + 12;
    static final int STATUS_FIRST = HEADER_LENGTH + 20;
    static final int STATUS_LAST = HEADER_LENGTH + 28;
    static final int STATUS_QUORUM = HEADER_LENGTH + 36;
    static final int STATUS_END = HEADER_LENGTH + 44;
    /** TAIL_STATUS kinds: the answer to a TAIL_OPEN, and a heartbeat while the tail has nothing to send. */
    public static final int STATUS_OPENED = 0;
    public static final int STATUS_ALIVE = 1;

    // TAIL_DATA body
    static final int DATA_TAIL = HEADER_LENGTH;
    static final int DATA_INDEX = HEADER_LENGTH + 8;
    static final int DATA_TOTAL = HEADER_LENGTH + 16;
    static final int DATA_PIECE_OFFSET = HEADER_LENGTH + 20;
    static final int DATA_PIECE_LENGTH = HEADER_LENGTH + 24;
    public static final int DATA_PIECE = HEADER_LENGTH + 28;
    /** Bytes a TAIL_DATA adds around its piece. */
    public static final int DATA_OVERHEAD = DATA_PIECE + MAC_LENGTH;

    // TAIL_CREDIT body
    static final int CREDIT_TAIL = HEADER_LENGTH;
    static final int CREDIT_GRANT = HEADER_LENGTH + 8;
    static final int CREDIT_END = HEADER_LENGTH + 12;

    // TAIL_END body
    static final int END_TAIL = HEADER_LENGTH;
    static final int END_REASON = HEADER_LENGTH + 8;
    static final int END_FIRST = HEADER_LENGTH + 12;
    static final int END_LAST = HEADER_LENGTH + 20;
    static final int END_MESSAGE_LENGTH = HEADER_LENGTH + 28;

    private DirectBuffer buffer;
    private int offset;
    private int length;
    private ClientFrameType type;
    // decoded positions of variable fields (relative to offset)
    private int nameAt;
    private int nameLength;
    private int hostAt;
    private int hostLength;
    private int portAt;
    private int descriptorAt;
    private int descriptorLength;
    private int messageAt;
    private int messageLength;

    /**
     * Wraps {@code buffer[offset, offset + length)} and checks the header and the body of its type.
     *
     * @throws MalformedClientFrameException naming the first field that does not fit
     */
    public ClientFrame wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.type = null;
        if (offset < 0 || length < 0 || (long) offset + length > buffer.capacity()) {
            throw new MalformedClientFrameException("frame: [" + offset + ", +" + length + ") outside its buffer of " + buffer.capacity());
        }
        if (length < HEADER_LENGTH + MAC_LENGTH) {
            throw new MalformedClientFrameException("frame: " + length + " bytes, shorter than header and MAC");
        }
        int version = buffer.getByte(offset) & 0xFF;
        if (version != VERSION) {
            throw new MalformedClientFrameException("version: " + version + ", this node speaks " + VERSION);
        }
        ClientFrameType t = ClientFrameType.of(buffer.getByte(offset + TYPE_OFFSET) & 0xFF);
        if (t == null) {
            throw new MalformedClientFrameException("type: unknown code " + (buffer.getByte(offset + TYPE_OFFSET) & 0xFF));
        }
        if (buffer.getShort(offset + 2, ORDER) != 0) {
            throw new MalformedClientFrameException("reserved: not 0");
        }
        int declared = buffer.getInt(offset + LENGTH_OFFSET, ORDER);
        if (declared != length) {
            throw new MalformedClientFrameException("length: says " + declared + ", frame has " + length);
        }
        int end = length - MAC_LENGTH; // body ends here
        int at = HEADER_LENGTH;
        switch (t) {
            case CONNECT -> {
                at = need(at, NONCE_LENGTH, end, "nonce");
                nameLength = u8(at, end, "queue name length");
                at++;
                if (nameLength == 0) {
                    throw new MalformedClientFrameException("queue name: empty");
                }
                nameAt = at;
                at = need(at, nameLength, end, "queue name");
                hostLength = u8(at, end, "reply host length");
                at++;
                if (hostLength == 0) {
                    throw new MalformedClientFrameException("reply host: empty");
                }
                hostAt = at;
                at = need(at, hostLength, end, "reply host");
                portAt = at;
                at = need(at, 2, end, "reply port");
                if (port() == 0) {
                    throw new MalformedClientFrameException("reply port: 0");
                }
            }
            case CHALLENGE -> at = need(at, 2 * NONCE_LENGTH + PROOF_LENGTH, end, "challenge");
            case PROOF -> at = need(at, PROOF_LENGTH, end, "proof");
            case CONNECTED -> {
                at = need(at, 8 + 1 + 1 + 2 + 4, end, "connected");
                if ((buffer.getByte(offset + HEADER_LENGTH + 8) & 0xFF) > 1) {
                    throw new MalformedClientFrameException("leads: not 0 or 1");
                }
                if ((buffer.getByte(offset + HEADER_LENGTH + 9) & 0xFF) > 2) {
                    throw new MalformedClientFrameException("ack mode: unknown code");
                }
                if (maxEnvelope() < 0) {
                    throw new MalformedClientFrameException("max envelope: negative");
                }
                hostLength = u8(at, end, "leader host length");
                at++;
                hostAt = at;
                at = need(at, hostLength, end, "leader host");
                portAt = at;
                at = need(at, 2, end, "leader port");
                descriptorLength = i32(at, end, "descriptor length");
                at += 4;
                if (descriptorLength < 0 || descriptorLength > MAX_DESCRIPTOR) {
                    throw new MalformedClientFrameException("descriptor length: " + descriptorLength + " outside 0.." + MAX_DESCRIPTOR);
                }
                descriptorAt = at;
                at = need(at, descriptorLength, end, "descriptor");
            }
            case APPEND -> {
                at = need(at, APPEND_ENVELOPE - HEADER_LENGTH, end, "append");
                if (buffer.getShort(offset + APPEND_QUEUE + 2, ORDER) != 0) {
                    throw new MalformedClientFrameException("append reserved: not 0");
                }
                int envelope = envelopeLength();
                if (envelope < 0) {
                    throw new MalformedClientFrameException("envelope length: negative");
                }
                at = need(at, envelope, end, "envelope");
            }
            case APPEND_ACK, APPEND_PENDING -> at = need(at, ACK_END - HEADER_LENGTH, end, "ack");
            case REFUSED -> {
                at = need(at, 1 + 1 + 2 + 8 + 4 + 8, end, "refused");
                if (refusal() == null) {
                    throw new MalformedClientFrameException("refusal reason: unknown code " + (buffer.getByte(offset + HEADER_LENGTH) & 0xFF));
                }
                portAt = HEADER_LENGTH + 2;
                hostLength = u8(at, end, "leader host length");
                at++;
                hostAt = at;
                at = need(at, hostLength, end, "leader host");
                at = need(at, 2, end, "message length");
                messageLength = buffer.getShort(offset + at - 2, ORDER) & 0xFFFF;
                messageAt = at;
                at = need(at, messageLength, end, "message");
            }
            case TAIL_OPEN -> {
                at = need(at, OPEN_END - HEADER_LENGTH, end, "tail open");
                if (tailFrom() == null) {
                    throw new MalformedClientFrameException("tail from: unknown code " + (buffer.getByte(offset + OPEN_FROM) & 0xFF));
                }
                if (tailMode() == null) {
                    throw new MalformedClientFrameException("tail mode: unknown code " + (buffer.getByte(offset + OPEN_MODE) & 0xFF));
                }
                if (openCredit() < 0) {
                    throw new MalformedClientFrameException("tail credit: negative");
                }
            }
            case TAIL_STATUS -> {
                at = need(at, STATUS_END - HEADER_LENGTH, end, "tail status");
                if (statusKind() > STATUS_ALIVE) {
                    throw new MalformedClientFrameException("tail status kind: unknown code " + statusKind());
                }
                if ((buffer.getByte(offset + STATUS_KIND + 1) | buffer.getShort(offset + STATUS_KIND + 2, ORDER)) != 0) {
                    throw new MalformedClientFrameException("tail status reserved: not 0");
                }
            }
            case TAIL_DATA -> {
                at = need(at, DATA_PIECE - HEADER_LENGTH, end, "tail data");
                int total = dataTotal();
                int pieceOffset = dataPieceOffset();
                int pieceLength = dataPieceLength();
                if (total < 0 || pieceOffset < 0 || pieceLength < 0 || (long) pieceOffset + pieceLength > total) {
                    throw new MalformedClientFrameException("tail data piece: [" + pieceOffset + ", +" + pieceLength
                            + ") is not inside an excerpt of " + total + " bytes");
                }
                at = need(at, pieceLength, end, "tail data piece");
            }
            case TAIL_CREDIT -> {
                at = need(at, CREDIT_END - HEADER_LENGTH, end, "tail credit");
                if (creditGrant() < 0) {
                    throw new MalformedClientFrameException("tail credit grant: negative");
                }
            }
            case TAIL_END -> {
                at = need(at, END_MESSAGE_LENGTH + 2 - HEADER_LENGTH, end, "tail end");
                if (tailEndReason() == null) {
                    throw new MalformedClientFrameException("tail end reason: unknown code " + (buffer.getByte(offset + END_REASON) & 0xFF));
                }
                if ((buffer.getByte(offset + END_REASON + 1) | buffer.getShort(offset + END_REASON + 2, ORDER)) != 0) {
                    throw new MalformedClientFrameException("tail end reserved: not 0");
                }
                messageLength = buffer.getShort(offset + END_MESSAGE_LENGTH, ORDER) & 0xFFFF;
                messageAt = at;
                at = need(at, messageLength, end, "message");
            }
            default -> throw new MalformedClientFrameException("type: " + t);
        }
        if (at != end) {
            throw new MalformedClientFrameException("body: " + (end - at) + " bytes after the last field of " + t);
        }
        this.type = t;
        return this;
    }

    private int need(int at, int bytes, int end, String field) throws MalformedClientFrameException {
        if (bytes < 0 || at + bytes > end || at + bytes < at) {
            throw new MalformedClientFrameException(field + ": needs " + bytes + " bytes, " + Math.max(0, end - at) + " left");
        }
        return at + bytes;
    }

    private int u8(int at, int end, String field) throws MalformedClientFrameException {
        need(at, 1, end, field);
        return buffer.getByte(offset + at) & 0xFF;
    }

    private int i32(int at, int end, String field) throws MalformedClientFrameException {
        need(at, 4, end, field);
        return buffer.getInt(offset + at, ORDER);
    }

    // ------------------------------------------------------------------------------------------------ header

    public ClientFrameType type() {
        return type;
    }

    public DirectBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public int length() {
        return length;
    }

    public int macOffset() {
        return offset + length - MAC_LENGTH;
    }

    public long connection() {
        return buffer.getLong(offset + CONNECTION_OFFSET, ORDER);
    }

    public long sequence() {
        return buffer.getLong(offset + SEQUENCE_OFFSET, ORDER);
    }

    // ------------------------------------------------------------------------------------------------ bodies

    /** CONNECT: client nonce; CHALLENGE: client nonce, node nonce, node proof; PROOF: the proof. */
    public void bytesAt(int bodyOffset, byte[] dst, int length) {
        buffer.getBytes(offset + HEADER_LENGTH + bodyOffset, dst, 0, length);
    }

    /** CONNECT: the queue's name. */
    public String queueName() {
        return buffer.getStringWithoutLengthUtf8(offset + nameAt, nameLength);
    }

    /** CONNECT: reply host; CONNECTED, REFUSED: the leader's client host ("" when unknown). */
    public String host() {
        return buffer.getStringWithoutLengthAscii(offset + hostAt, hostLength);
    }

    /** CONNECT: reply port; CONNECTED, REFUSED: the leader's client port (0 when unknown). */
    public int port() {
        return buffer.getShort(offset + portAt, ORDER) & 0xFFFF;
    }

    /** CONNECTED: the node's term. */
    public long connectedTerm() {
        return buffer.getLong(offset + HEADER_LENGTH, ORDER);
    }

    /** CONNECTED: whether this node leads the queue. */
    public boolean leads() {
        return buffer.getByte(offset + HEADER_LENGTH + 8) == 1;
    }

    /** CONNECTED: 0 async, 1 replicated reads, 2 quorum. */
    public int ackModeCode() {
        return buffer.getByte(offset + HEADER_LENGTH + 9) & 0xFF;
    }

    /** CONNECTED: the queue's position on the node (APPEND names it). */
    public int connectedQueue() {
        return buffer.getShort(offset + HEADER_LENGTH + 10, ORDER) & 0xFFFF;
    }

    /** CONNECTED: the largest envelope the node takes from a client. */
    public int maxEnvelope() {
        return buffer.getInt(offset + HEADER_LENGTH + 12, ORDER);
    }

    /** CONNECTED: the queue descriptor's bytes (empty when the queue has none). */
    public byte[] descriptor() {
        byte[] out = new byte[descriptorLength];
        buffer.getBytes(offset + descriptorAt, out);
        return out;
    }

    public int appendQueue() {
        return buffer.getShort(offset + APPEND_QUEUE, ORDER) & 0xFFFF;
    }

    /** APPEND: the highest term the client has seen a leader under. */
    public long appendTerm() {
        return buffer.getLong(offset + APPEND_TERM, ORDER);
    }

    public long appendEpoch() {
        return buffer.getLong(offset + APPEND_EPOCH, ORDER);
    }

    public int appendSequence() {
        return buffer.getInt(offset + APPEND_SEQUENCE, ORDER);
    }

    public int envelopeLength() {
        return buffer.getInt(offset + APPEND_LENGTH, ORDER);
    }

    /** APPEND: where the envelope starts in {@link #buffer()}. */
    public int envelopeOffset() {
        return offset + APPEND_ENVELOPE;
    }

    public long ackEpoch() {
        return buffer.getLong(offset + ACK_EPOCH, ORDER);
    }

    public int ackSequence() {
        return buffer.getInt(offset + ACK_SEQUENCE, ORDER);
    }

    public long ackIndex() {
        return buffer.getLong(offset + ACK_INDEX, ORDER);
    }

    public long ackTerm() {
        return buffer.getLong(offset + ACK_TERM, ORDER);
    }

    public ClientRefusal refusal() {
        return ClientRefusal.of(buffer.getByte(offset + HEADER_LENGTH) & 0xFF);
    }

    public long refusedEpoch() {
        return buffer.getLong(offset + HEADER_LENGTH + 4, ORDER);
    }

    public int refusedSequence() {
        return buffer.getInt(offset + HEADER_LENGTH + 12, ORDER);
    }

    public long refusedTerm() {
        return buffer.getLong(offset + HEADER_LENGTH + 16, ORDER);
    }

    public String message() {
        return buffer.getStringWithoutLengthUtf8(offset + messageAt, messageLength);
    }

    // ------------------------------------------------------------------------------------------------ tail bodies

    /** TAIL_OPEN: the queue's position on the node (as CONNECTED named it). */
    public int openQueue() {
        return buffer.getShort(offset + OPEN_QUEUE, ORDER) & 0xFFFF;
    }

    public TailFrom tailFrom() {
        return TailFrom.of(buffer.getByte(offset + OPEN_FROM) & 0xFF);
    }

    public TailMode tailMode() {
        return TailMode.of(buffer.getByte(offset + OPEN_MODE) & 0xFF);
    }

    /** TAIL_OPEN: how many excerpts the node may send before the client grants more. */
    public int openCredit() {
        return buffer.getInt(offset + OPEN_CREDIT, ORDER);
    }

    /** TAIL_OPEN: the client's id for this tail; every TAIL_STATUS, TAIL_DATA, TAIL_END of it carries the same. */
    public long openTail() {
        return buffer.getLong(offset + OPEN_TAIL, ORDER);
    }

    /** TAIL_OPEN: the index for {@link TailFrom#AT} and {@link TailFrom#AFTER}. */
    public long openIndex() {
        return buffer.getLong(offset + OPEN_INDEX, ORDER);
    }

    public long statusTail() {
        return buffer.getLong(offset + STATUS_TAIL, ORDER);
    }

    /** {@link #STATUS_OPENED} or {@link #STATUS_ALIVE}. */
    public int statusKind() {
        return buffer.getByte(offset + STATUS_KIND) & 0xFF;
    }

    /** TAIL_STATUS: the index the tail continues after (-1: from the node's first excerpt). */
    public long statusAfter() {
        return buffer.getLong(offset + STATUS_AFTER, ORDER);
    }

    /** TAIL_STATUS: the first index the node holds (-1: none). */
    public long statusFirst() {
        return buffer.getLong(offset + STATUS_FIRST, ORDER);
    }

    /** TAIL_STATUS: the last index the node holds (-1: none). */
    public long statusLast() {
        return buffer.getLong(offset + STATUS_LAST, ORDER);
    }

    /** TAIL_STATUS: the highest index a majority holds, as this node knows (-1: none). */
    public long statusQuorum() {
        return buffer.getLong(offset + STATUS_QUORUM, ORDER);
    }

    public long dataTail() {
        return buffer.getLong(offset + DATA_TAIL, ORDER);
    }

    public long dataIndex() {
        return buffer.getLong(offset + DATA_INDEX, ORDER);
    }

    /** TAIL_DATA: the whole envelope's length. */
    public int dataTotal() {
        return buffer.getInt(offset + DATA_TOTAL, ORDER);
    }

    /** TAIL_DATA: where this piece goes in the envelope. */
    public int dataPieceOffset() {
        return buffer.getInt(offset + DATA_PIECE_OFFSET, ORDER);
    }

    public int dataPieceLength() {
        return buffer.getInt(offset + DATA_PIECE_LENGTH, ORDER);
    }

    /** TAIL_DATA: where the piece starts in {@link #buffer()}. */
    public int dataPieceAt() {
        return offset + DATA_PIECE;
    }

    public long creditTail() {
        return buffer.getLong(offset + CREDIT_TAIL, ORDER);
    }

    public int creditGrant() {
        return buffer.getInt(offset + CREDIT_GRANT, ORDER);
    }

    public long tailEndTail() {
        return buffer.getLong(offset + END_TAIL, ORDER);
    }

    public ClientRefusal tailEndReason() {
        return ClientRefusal.of(buffer.getByte(offset + END_REASON) & 0xFF);
    }

    /** TAIL_END: the first index the node holds (-1: none). */
    public long tailEndFirst() {
        return buffer.getLong(offset + END_FIRST, ORDER);
    }

    /** TAIL_END: the last index the node holds (-1: none). */
    public long tailEndLast() {
        return buffer.getLong(offset + END_LAST, ORDER);
    }

    // ------------------------------------------------------------------------------------------------ encoding

    /** Writes a header; returns the body's first position. The caller writes the body, then {@link #finish}. */
    public static int begin(MutableDirectBuffer out, ClientFrameType type, long connection, long sequence) {
        out.putByte(0, (byte) VERSION);
        out.putByte(TYPE_OFFSET, (byte) type.code());
        out.putShort(2, (short) 0, ORDER);
        out.putLong(CONNECTION_OFFSET, connection, ORDER);
        out.putLong(SEQUENCE_OFFSET, sequence, ORDER);
        return HEADER_LENGTH;
    }

    /** Writes the length for a body ending at {@code bodyEnd}; returns the frame length (MAC still to be written). */
    public static int finish(MutableDirectBuffer out, int bodyEnd) {
        int length = bodyEnd + MAC_LENGTH;
        out.putInt(LENGTH_OFFSET, length, ORDER);
        return length;
    }

    /** Puts a u8-length-prefixed string; returns the position after it. */
    public static int putShortString(MutableDirectBuffer out, int at, String s, boolean utf8) {
        byte[] bytes = s.getBytes(utf8 ? StandardCharsets.UTF_8 : StandardCharsets.US_ASCII);
        if (bytes.length > 255) {
            throw new IllegalArgumentException("'" + s + "' is longer than 255 bytes");
        }
        out.putByte(at, (byte) bytes.length);
        out.putBytes(at + 1, bytes);
        return at + 1 + bytes.length;
    }

    public static int encodeConnect(MutableDirectBuffer out, long connection, byte[] nonce, String queue, String replyHost, int replyPort) {
        int at = begin(out, ClientFrameType.CONNECT, connection, 1);
        out.putBytes(at, nonce, 0, NONCE_LENGTH);
        at = putShortString(out, at + NONCE_LENGTH, queue, true);
        at = putShortString(out, at, replyHost, false);
        out.putShort(at, (short) replyPort, ORDER);
        return finish(out, at + 2);
    }

    public static int encodeChallenge(MutableDirectBuffer out, long connection, long sequence, byte[] clientNonce, byte[] nodeNonce, byte[] proof) {
        int at = begin(out, ClientFrameType.CHALLENGE, connection, sequence);
        out.putBytes(at, clientNonce, 0, NONCE_LENGTH);
        out.putBytes(at + NONCE_LENGTH, nodeNonce, 0, NONCE_LENGTH);
        out.putBytes(at + 2 * NONCE_LENGTH, proof, 0, PROOF_LENGTH);
        return finish(out, at + 2 * NONCE_LENGTH + PROOF_LENGTH);
    }

    public static int encodeProof(MutableDirectBuffer out, long connection, long sequence, byte[] proof) {
        int at = begin(out, ClientFrameType.PROOF, connection, sequence);
        out.putBytes(at, proof, 0, PROOF_LENGTH);
        return finish(out, at + PROOF_LENGTH);
    }

    public static int encodeConnected(MutableDirectBuffer out, long connection, long sequence, long term, boolean leads,
                                      int ackModeCode, int queue, int maxEnvelope, String leaderHost, int leaderPort,
                                      byte[] descriptor) {
        int at = begin(out, ClientFrameType.CONNECTED, connection, sequence);
        out.putLong(at, term, ORDER);
        out.putByte(at + 8, (byte) (leads ? 1 : 0));
        out.putByte(at + 9, (byte) ackModeCode);
        out.putShort(at + 10, (short) queue, ORDER);
        out.putInt(at + 12, maxEnvelope, ORDER);
        at = putShortString(out, at + 16, leaderHost, false);
        out.putShort(at, (short) leaderPort, ORDER);
        out.putInt(at + 2, descriptor.length, ORDER);
        out.putBytes(at + 6, descriptor);
        return finish(out, at + 6 + descriptor.length);
    }

    /** An APPEND around an envelope already at {@code out[APPEND_ENVELOPE ..]}: the caller sealed it in place. */
    public static int encodeAppendAround(MutableDirectBuffer out, long connection, long sequence, int queue, long clientTerm,
                                         long epoch, int writerSequence, int envelopeLength) {
        begin(out, ClientFrameType.APPEND, connection, sequence);
        out.putShort(APPEND_QUEUE, (short) queue, ORDER);
        out.putShort(APPEND_QUEUE + 2, (short) 0, ORDER);
        out.putLong(APPEND_TERM, clientTerm, ORDER);
        out.putLong(APPEND_EPOCH, epoch, ORDER);
        out.putInt(APPEND_SEQUENCE, writerSequence, ORDER);
        out.putInt(APPEND_LENGTH, envelopeLength, ORDER);
        return finish(out, APPEND_ENVELOPE + envelopeLength);
    }

    public static int encodeAck(MutableDirectBuffer out, ClientFrameType type, long connection, long sequence, long epoch,
                                int writerSequence, long index, long term) {
        begin(out, type, connection, sequence);
        out.putLong(ACK_EPOCH, epoch, ORDER);
        out.putInt(ACK_SEQUENCE, writerSequence, ORDER);
        out.putLong(ACK_INDEX, index, ORDER);
        out.putLong(ACK_TERM, term, ORDER);
        return finish(out, ACK_END);
    }

    public static int encodeRefused(MutableDirectBuffer out, long connection, long sequence, ClientRefusal reason, long epoch,
                                    int writerSequence, long term, String leaderHost, int leaderPort, String message) {
        int at = begin(out, ClientFrameType.REFUSED, connection, sequence);
        out.putByte(at, (byte) reason.code());
        out.putByte(at + 1, (byte) 0);
        out.putShort(at + 2, (short) leaderPort, ORDER);
        out.putLong(at + 4, epoch, ORDER);
        out.putInt(at + 12, writerSequence, ORDER);
        out.putLong(at + 16, term, ORDER);
        at = putShortString(out, at + 24, leaderHost, false);
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, 1024);
        out.putShort(at, (short) n, ORDER);
        out.putBytes(at + 2, text, 0, n);
        return finish(out, at + 2 + n);
    }

    public static int encodeTailOpen(MutableDirectBuffer out, long connection, long sequence, int queue, TailFrom from,
                                     TailMode mode, int credit, long tail, long index) {
        begin(out, ClientFrameType.TAIL_OPEN, connection, sequence);
        out.putShort(OPEN_QUEUE, (short) queue, ORDER);
        out.putByte(OPEN_FROM, (byte) from.code());
        out.putByte(OPEN_MODE, (byte) mode.code());
        out.putInt(OPEN_CREDIT, credit, ORDER);
        out.putLong(OPEN_TAIL, tail, ORDER);
        out.putLong(OPEN_INDEX, index, ORDER);
        return finish(out, OPEN_END);
    }

    public static int encodeTailStatus(MutableDirectBuffer out, long connection, long sequence, long tail, int kind,
                                       long after, long first, long last, long quorum) {
        begin(out, ClientFrameType.TAIL_STATUS, connection, sequence);
        out.putLong(STATUS_TAIL, tail, ORDER);
        out.putInt(STATUS_KIND, kind & 0xFF, ORDER); // kind, then three reserved zero bytes
        out.putLong(STATUS_AFTER, after, ORDER);
        out.putLong(STATUS_FIRST, first, ORDER);
        out.putLong(STATUS_LAST, last, ORDER);
        out.putLong(STATUS_QUORUM, quorum, ORDER);
        return finish(out, STATUS_END);
    }

    /** A TAIL_DATA around a piece already at {@code out[DATA_PIECE ..]}: the caller copied it there. */
    public static int encodeTailDataAround(MutableDirectBuffer out, long connection, long sequence, long tail, long index,
                                           int total, int pieceOffset, int pieceLength) {
        begin(out, ClientFrameType.TAIL_DATA, connection, sequence);
        out.putLong(DATA_TAIL, tail, ORDER);
        out.putLong(DATA_INDEX, index, ORDER);
        out.putInt(DATA_TOTAL, total, ORDER);
        out.putInt(DATA_PIECE_OFFSET, pieceOffset, ORDER);
        out.putInt(DATA_PIECE_LENGTH, pieceLength, ORDER);
        return finish(out, DATA_PIECE + pieceLength);
    }

    public static int encodeTailCredit(MutableDirectBuffer out, long connection, long sequence, long tail, int grant) {
        begin(out, ClientFrameType.TAIL_CREDIT, connection, sequence);
        out.putLong(CREDIT_TAIL, tail, ORDER);
        out.putInt(CREDIT_GRANT, grant, ORDER);
        return finish(out, CREDIT_END);
    }

    public static int encodeTailEnd(MutableDirectBuffer out, long connection, long sequence, long tail, ClientRefusal reason,
                                    long first, long last, String message) {
        begin(out, ClientFrameType.TAIL_END, connection, sequence);
        out.putLong(END_TAIL, tail, ORDER);
        out.putInt(END_REASON, reason.code() & 0xFF, ORDER); // reason, then three reserved zero bytes
        out.putLong(END_FIRST, first, ORDER);
        out.putLong(END_LAST, last, ORDER);
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, 1024);
        out.putShort(END_MESSAGE_LENGTH, (short) n, ORDER);
        out.putBytes(END_MESSAGE_LENGTH + 2, text, 0, n);
        return finish(out, END_MESSAGE_LENGTH + 2 + n);
    }
}
