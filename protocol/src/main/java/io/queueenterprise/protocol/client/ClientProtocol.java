package io.queueenterprise.protocol.client;

import io.queueenterprise.protocol.FrameTrailerMac;

import java.nio.ByteOrder;

/**
 * The client-facing wire format, version {@value #VERSION}, little-endian. Every frame is a header, a body of its type
 * ({@link ClientFrameType}; one encoder and one decoder per type in this package) and a MAC trailer:
 *
 * <pre>
 *  0  u8   version
 *  1  u8   type ({@link ClientFrameType} code)
 *  2  u16  reserved, 0
 *  4  i32  frame length, header and MAC included
 *  8  i64  connection id (chosen at random by the client for one connection)
 * 16  i64  sequence, strictly increasing per connection and direction
 * 24  ...  body (per type, see the type's decoder)
 *  n  16   MAC: HMAC-SHA256 (first 16 bytes) under the handshake key (CONNECT, CHALLENGE, PROOF, refusals before a
 *          session) or the session key ({@link ClientFrameMac})
 * </pre>
 *
 * Every enumerated field is a byte from a fixed code table ({@link ClientFrameType}, {@link ClientRefusal},
 * {@link TailFrom}, {@link TailMode}, {@link TailStatusKind}, {@link ClientAckMode}), never a Java ordinal.
 */
public final class ClientProtocol {
    /**
     * 4: APPEND_BATCH (several appends of one writer epoch under one session MAC). 3: per-client identities (CONNECT names the client and carries its ephemeral X25519 key, CHALLENGE the node's,
     * PROOF the client's Ed25519 signature; session keys from the credential and the X25519 secret) and cumulative
     * APPEND_ACKs (a run of consecutive writer sequences of one epoch, one index each). 2: write tags.
     */
    public static final int VERSION = 4;
    /** The most writes one APPEND_ACK acknowledges (8 KiB of indexes: a reply channel's message is at most 16 KiB). */
    public static final int MAX_ACKS_PER_FRAME = 1024;
    /**
     * The most appends one client keeps in flight (its window's largest count): after a failover it resends at most
     * these, its epoch's latest, and a node remembers the index of each epoch's latest this many.
     */
    public static final int MAX_WINDOW_APPENDS = 4096;
    /** The most appends one APPEND_BATCH carries. */
    public static final int MAX_BATCH_APPENDS = 64;
    /** Bytes an APPEND_BATCH adds around its entries. */
    public static final int BATCH_OVERHEAD = 24 + 24 + FrameTrailerMac.LENGTH; // header, batch fields, MAC
    /** Bytes each APPEND_BATCH entry adds to its envelope: its length (i32) and write tag. */
    public static final int BATCH_ENTRY_OVERHEAD = 4 + WriteTag.LENGTH;

    /** Bytes one APPEND_BATCH entry of an {@code envelopeLength}-byte envelope takes (a batch is {@link #BATCH_OVERHEAD} and its entries). */
    public static int batchEntryLength(int envelopeLength) {
        return BATCH_ENTRY_OVERHEAD + envelopeLength;
    }
    /** An X25519 public key (CONNECT, CHALLENGE). */
    public static final int EPHEMERAL_LENGTH = 32;
    /** An Ed25519 signature (PROOF, CLAIM). */
    public static final int SIGNATURE_LENGTH = 64;
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    public static final int HEADER_LENGTH = 24;
    public static final int MAC_LENGTH = FrameTrailerMac.LENGTH;
    public static final int NONCE_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;
    public static final int MAX_DESCRIPTOR = 64 * 1024;
    public static final int MAX_FRAME = 16 * 1024 * 1024;
    /** The longest refusal or tail-end message sent; longer ones are cut to it. */
    public static final int MAX_MESSAGE = 1024;
    public static final int NO_QUEUE = 0xFFFF;

    public static final int TYPE_OFFSET = 1;
    public static final int RESERVED_OFFSET = 2;
    public static final int LENGTH_OFFSET = 4;
    public static final int CONNECTION_OFFSET = 8;
    public static final int SEQUENCE_OFFSET = 16;

    /** Where an APPEND's write-authorisation tag lies in its frame ({@link WriteTag}; the client writes it there). */
    public static final int APPEND_WRITE_TAG = HEADER_LENGTH + 28;
    /** Where an APPEND's envelope starts in its frame (the client seals in place there). */
    public static final int APPEND_ENVELOPE = APPEND_WRITE_TAG + WriteTag.LENGTH;
    /** Bytes an APPEND adds around its envelope. */
    public static final int APPEND_OVERHEAD = APPEND_ENVELOPE + MAC_LENGTH;
    /** Where a TAIL_DATA's piece starts in its frame (the node copies it there). */
    public static final int DATA_PIECE = HEADER_LENGTH + 28;
    /** Bytes a TAIL_DATA adds around its piece. */
    public static final int DATA_OVERHEAD = DATA_PIECE + MAC_LENGTH;

    private ClientProtocol() {
    }
}
