package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

import java.nio.ByteOrder;

/**
 * The frame layout shared by every type (little-endian), in Aeron's SBE-less style: a fixed header, a body whose
 * layout the type fixes, and a MAC trailer.
 *
 * <pre>
 *  0  u8   version ({@value #VERSION})
 *  1  u8   type ({@link FrameType})
 *  2  u16  sender: the sender's position in the cluster's peer list
 *  4  i32  frame length, header and trailer included (= the Aeron message length)
 *  8  i64  leadership term the sender acts under
 * 16  i64  session id (chosen by the session's initiator)
 * 24  i64  sequence: per session and direction, strictly increasing (a replayed frame is dropped)
 * 32  ...  body
 * end u8[16] MAC: HMAC-SHA256 (truncated) under the sender's direction of the session key, over everything before it; for the handshake
 *            frames under the handshake key derived from the peer credential
 * </pre>
 *
 * <p>{@link #wrap} checks the header; the typed decoders check their body completely when they wrap, so their
 * accessors never read outside the frame. Nothing here allocates.
 */
public final class Frame {
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    /**
     * 3: per-node identities (signed handshake, ephemeral X25519 keys in the session keys; see {@code SessionCrypto});
     * 2: per-direction session keys. An earlier node's handshake frames have other lengths and its session frames would
     * fail every MAC here, so its frames are refused by version, visibly, rather than by MAC.
     */
    public static final int VERSION = 3;
    public static final int VERSION_OFFSET = 0;
    public static final int TYPE_OFFSET = 1;
    public static final int SENDER_OFFSET = 2;
    public static final int LENGTH_OFFSET = 4;
    public static final int TERM_OFFSET = 8;
    public static final int SESSION_OFFSET = 16;
    public static final int SEQUENCE_OFFSET = 24;
    public static final int HEADER_LENGTH = 32;
    public static final int MAC_LENGTH = io.queueenterprise.protocol.FrameTrailerMac.LENGTH;
    public static final int MIN_LENGTH = HEADER_LENGTH + MAC_LENGTH;
    /** Peers in one cluster, at most. */
    public static final int MAX_PEERS = 255;

    private DirectBuffer buffer;
    private int offset;
    private int length;
    private FrameType type;

    /**
     * Wraps and checks the header of the frame in {@code buffer[offset, offset + length)}.
     *
     * @throws MalformedFrameException naming the header field that is wrong
     */
    public Frame wrap(DirectBuffer buffer, int offset, int length) throws MalformedFrameException {
        if (offset < 0 || length < 0 || (long) offset + length > buffer.capacity()) {
            throw new MalformedFrameException("length", "frame [" + offset + ", +" + length + ") is outside the buffer");
        }
        if (length < MIN_LENGTH) {
            throw new MalformedFrameException("length", length + " bytes is shorter than the " + MIN_LENGTH + "-byte minimum");
        }
        int version = buffer.getByte(offset + VERSION_OFFSET) & 0xFF;
        if (version != VERSION) {
            throw new MalformedFrameException("version", "version " + version + " is not " + VERSION);
        }
        FrameType t = FrameType.of(buffer.getByte(offset + TYPE_OFFSET) & 0xFF);
        if (t == null) {
            throw new MalformedFrameException("type", "unknown type " + (buffer.getByte(offset + TYPE_OFFSET) & 0xFF));
        }
        int declared = buffer.getInt(offset + LENGTH_OFFSET, ORDER);
        if (declared != length) {
            throw new MalformedFrameException("length", "header says " + declared + " bytes, frame has " + length);
        }
        int sender = buffer.getShort(offset + SENDER_OFFSET, ORDER) & 0xFFFF;
        if (sender >= MAX_PEERS) {
            throw new MalformedFrameException("sender", "sender " + sender + " is not a peer position");
        }
        if (buffer.getLong(offset + TERM_OFFSET, ORDER) < 0) {
            throw new MalformedFrameException("term", "negative term");
        }
        if (buffer.getLong(offset + SEQUENCE_OFFSET, ORDER) < 0) {
            throw new MalformedFrameException("sequence", "negative sequence");
        }
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.type = t;
        return this;
    }

    /**
     * Whether {@code buffer[offset, offset + length)}, which {@link #wrap} refused for its version, is a frame of an
     * earlier version (1 to {@code VERSION - 1}) whose header otherwise reads: its declared length is its length and
     * its type is known. A node of an older release, then, rather than noise; only the bounds are assumed checked.
     */
    public static boolean earlierVersion(DirectBuffer buffer, int offset, int length) {
        int version = buffer.getByte(offset + VERSION_OFFSET) & 0xFF;
        return version >= 1 && version < VERSION && buffer.getInt(offset + LENGTH_OFFSET, ORDER) == length
                && FrameType.of(buffer.getByte(offset + TYPE_OFFSET) & 0xFF) != null;
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

    public FrameType type() {
        return type;
    }

    public int sender() {
        return buffer.getShort(offset + SENDER_OFFSET, ORDER) & 0xFFFF;
    }

    public long term() {
        return buffer.getLong(offset + TERM_OFFSET, ORDER);
    }

    public long sessionId() {
        return buffer.getLong(offset + SESSION_OFFSET, ORDER);
    }

    public long sequence() {
        return buffer.getLong(offset + SEQUENCE_OFFSET, ORDER);
    }

    public int bodyOffset() {
        return offset + HEADER_LENGTH;
    }

    public int bodyLength() {
        return length - HEADER_LENGTH - MAC_LENGTH;
    }

    /** Where the MAC trailer starts; the MAC covers {@code [offset, macOffset)}. */
    public int macOffset() {
        return offset + length - MAC_LENGTH;
    }
}
