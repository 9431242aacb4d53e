package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

/**
 * One decoder of every frame type, for a receiver that takes whatever arrives: {@link #wrap} reads the header's type
 * and wraps that type's decoder (header and body checked), which it returns; the receiver dispatches on
 * {@link ClientFrameDecoder#type()} and reads the typed field below. Reusable, one thread at a time, allocation-free
 * unless the frame is malformed.
 */
public final class ClientFrameDecoders {
    private final ClientFrameHeaderDecoder header = new ClientFrameHeaderDecoder();
    public final ConnectDecoder connect = new ConnectDecoder();
    public final ChallengeDecoder challenge = new ChallengeDecoder();
    public final ProofDecoder proof = new ProofDecoder();
    public final ConnectedDecoder connected = new ConnectedDecoder();
    public final AppendDecoder append = new AppendDecoder();
    public final AppendAckDecoder appendAck = new AppendAckDecoder();
    public final AppendPendingDecoder appendPending = new AppendPendingDecoder();
    public final RefusedDecoder refused = new RefusedDecoder();
    public final TailOpenDecoder tailOpen = new TailOpenDecoder();
    public final TailStatusDecoder tailStatus = new TailStatusDecoder();
    public final TailDataDecoder tailData = new TailDataDecoder();
    public final TailCreditDecoder tailCredit = new TailCreditDecoder();
    public final TailEndDecoder tailEnd = new TailEndDecoder();
    public final ClaimDecoder claim = new ClaimDecoder();
    public final AppendBatchDecoder appendBatch = new AppendBatchDecoder();

    /**
     * Wraps the decoder of the frame's type over {@code buffer[offset, offset + length)}.
     *
     * @return that decoder, wrapped
     * @throws MalformedClientFrameException naming the frame type and the field that does not fit
     */
    public ClientFrameDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        return switch (header.wrap(buffer, offset, length).type()) {
            case CONNECT -> connect.wrap(buffer, offset, length);
            case CHALLENGE -> challenge.wrap(buffer, offset, length);
            case PROOF -> proof.wrap(buffer, offset, length);
            case CONNECTED -> connected.wrap(buffer, offset, length);
            case APPEND -> append.wrap(buffer, offset, length);
            case APPEND_ACK -> appendAck.wrap(buffer, offset, length);
            case APPEND_PENDING -> appendPending.wrap(buffer, offset, length);
            case REFUSED -> refused.wrap(buffer, offset, length);
            case TAIL_OPEN -> tailOpen.wrap(buffer, offset, length);
            case TAIL_STATUS -> tailStatus.wrap(buffer, offset, length);
            case TAIL_DATA -> tailData.wrap(buffer, offset, length);
            case TAIL_CREDIT -> tailCredit.wrap(buffer, offset, length);
            case TAIL_END -> tailEnd.wrap(buffer, offset, length);
            case CLAIM -> claim.wrap(buffer, offset, length);
            case APPEND_BATCH -> appendBatch.wrap(buffer, offset, length);
        };
    }
}
