package io.queueenterprise.protocol.client;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client-facing decoders throw nothing but {@link MalformedClientFrameException} and never read outside the
 * frame: the header decoder dispatches as a receiver does, the type's decoder checks the body, and after a successful
 * wrap the oracle reads every field the type offers (an out-of-bounds read throws IndexOutOfBoundsException from
 * Agrona's bounds checks, which fails the test).
 */
@Tag("unit")
class ClientFrameFuzzTest {
    /** Where the oracle's reads go, so none is optimised away. */
    static volatile long blackhole;

    private static final ClientFrameHeaderDecoder HEADER = new ClientFrameHeaderDecoder();
    private static final ConnectDecoder CONNECT = new ConnectDecoder();
    private static final ChallengeDecoder CHALLENGE = new ChallengeDecoder();
    private static final ProofDecoder PROOF = new ProofDecoder();
    private static final ConnectedDecoder CONNECTED = new ConnectedDecoder();
    private static final AppendDecoder APPEND = new AppendDecoder();
    private static final AppendAckDecoder APPEND_ACK = new AppendAckDecoder();
    private static final AppendPendingDecoder APPEND_PENDING = new AppendPendingDecoder();
    private static final RefusedDecoder REFUSED = new RefusedDecoder();
    private static final TailOpenDecoder TAIL_OPEN = new TailOpenDecoder();
    private static final TailStatusDecoder TAIL_STATUS = new TailStatusDecoder();
    private static final TailDataDecoder TAIL_DATA = new TailDataDecoder();
    private static final TailCreditDecoder TAIL_CREDIT = new TailCreditDecoder();
    private static final TailEndDecoder TAIL_END = new TailEndDecoder();
    private static final ClaimDecoder CLAIM = new ClaimDecoder();
    private static final AppendBatchDecoder APPEND_BATCH = new AppendBatchDecoder();

    /** Regression mode over the committed seeds in the suite; coverage-guided for maxDuration with JAZZER_FUZZ=1. */
    @FuzzTest(maxDuration = "10s")
    void decoderThrowsOnlyMalformedClientFrameException(byte[] input) {
        decode(input);
    }

    @Test
    void everySampleDecodes() {
        for (byte[] sample : ClientFrameSamples.all()) {
            assertTrue(decode(sample), "sample of type " + sample[1]);
        }
    }

    @Test
    void seededMutantsOfValidFramesThrowOnlyMalformedClientFrameException() {
        long seed = Long.getLong("qe.fuzz.seed", System.nanoTime());
        SplittableRandom random = new SplittableRandom(seed);
        List<byte[]> samples = ClientFrameSamples.all();
        int accepted = 0;
        for (int i = 0; i < 200_000; i++) {
            byte[] sample = samples.get(random.nextInt(samples.size()));
            byte[] mutant = java.util.Arrays.copyOf(sample, Math.max(0, sample.length + random.nextInt(-8, 9)));
            int mutations = 1 + random.nextInt(4);
            for (int m = 0; m < mutations && mutant.length > 0; m++) {
                int at = random.nextInt(mutant.length);
                switch (random.nextInt(3)) {
                    case 0 -> mutant[at] ^= (byte) (1 << random.nextInt(8));
                    case 1 -> mutant[at] = (byte) random.nextInt(256);
                    default -> mutant[at] = (byte) (random.nextBoolean() ? 0xFF : 0x7F);
                }
            }
            if (mutant.length >= ClientProtocol.HEADER_LENGTH && random.nextInt(3) > 0) {
                new UnsafeBuffer(mutant).putInt(4, mutant.length, ClientProtocol.ORDER); // keep the length in step: reach the bodies
            }
            try {
                if (decode(mutant)) {
                    accepted++;
                }
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("seed " + seed + " (rerun with -Dqe.fuzz.seed=" + seed + "), mutant " + i + ": "
                        + java.util.HexFormat.of().formatHex(mutant), e);
            }
        }
        assertTrue(accepted > 1000, "mutants also reach the accept paths (" + accepted + "), seed " + seed);
    }

    @Test
    void aFrameOutsideItsBufferIsMalformedNotAnIndexError() {
        byte[] sample = ClientFrameSamples.all().get(0);
        MalformedClientFrameException e = assertThrows(MalformedClientFrameException.class,
                () -> new ClientFrameHeaderDecoder().wrap(new UnsafeBuffer(sample), 8, sample.length));
        assertTrue(e.getMessage().startsWith("frame:"), e.getMessage());
    }

    @Test
    void aTruncatedBodyNamesItsField() {
        byte[] connect = ClientFrameSamples.all().get(0);
        byte[] cut = java.util.Arrays.copyOf(connect, connect.length - 3);
        new UnsafeBuffer(cut).putInt(4, cut.length, ClientProtocol.ORDER);
        MalformedClientFrameException e = assertThrows(MalformedClientFrameException.class,
                () -> new ConnectDecoder().wrap(new UnsafeBuffer(cut), 0, cut.length));
        assertEquals("CONNECT client name: needs 13 bytes, 10 left", e.getMessage()); // the last field (version 3)
    }

    /** True when the frame decoded; reads every field of its type. */
    private static boolean decode(byte[] input) {
        UnsafeBuffer buffer = new UnsafeBuffer(input);
        long sink;
        byte[] scratch = new byte[32];
        try {
            HEADER.wrap(buffer, 0, input.length);
            sink = HEADER.connection() + HEADER.sequence() + HEADER.macOffset();
            switch (HEADER.type()) {
                case CONNECT -> {
                    ConnectDecoder f = CONNECT.wrap(buffer, 0, input.length);
                    f.clientNonce(scratch);
                    sink += f.queueName().length() + f.replyHost().length() + f.replyPort();
                }
                case CHALLENGE -> {
                    ChallengeDecoder f = CHALLENGE.wrap(buffer, 0, input.length);
                    f.clientNonce(scratch);
                    f.nodeNonce(scratch);
                    f.nodeProof(scratch);
                }
                case PROOF -> PROOF.wrap(buffer, 0, input.length).clientProof(scratch);
                case CONNECTED -> {
                    ConnectedDecoder f = CONNECTED.wrap(buffer, 0, input.length);
                    sink += f.term() + (f.leads() ? 1 : 0) + f.ackMode().code() + f.queue() + f.maxEnvelope()
                            + f.leaderHost().length() + f.leaderPort() + f.descriptor().length;
                }
                case APPEND -> {
                    AppendDecoder f = APPEND.wrap(buffer, 0, input.length);
                    sink += f.queue() + f.clientTerm() + f.epoch() + f.writerSequence() + f.envelopeLength();
                    byte[] env = new byte[f.envelopeLength()];
                    f.buffer().getBytes(f.envelopeOffset(), env);
                }
                case APPEND_ACK -> {
                    AppendAckDecoder f = APPEND_ACK.wrap(buffer, 0, input.length);
                    sink += f.epoch() + f.writerSequence() + f.firstSequence() + f.term() + f.index();
                    for (int i = 0; i < f.count(); i++) {
                        sink += f.index(i);
                    }
                }
                case APPEND_PENDING -> sink += outcome(APPEND_PENDING.wrap(buffer, 0, input.length));
                case REFUSED -> {
                    RefusedDecoder f = REFUSED.wrap(buffer, 0, input.length);
                    sink += f.reason().code() + f.epoch() + f.writerSequence() + f.term() + f.leaderHost().length()
                            + f.leaderPort() + f.message().length();
                }
                case TAIL_OPEN -> {
                    TailOpenDecoder f = TAIL_OPEN.wrap(buffer, 0, input.length);
                    sink += f.queue() + f.from().code() + f.mode().code() + f.credit() + f.tail() + f.index();
                }
                case TAIL_STATUS -> {
                    TailStatusDecoder f = TAIL_STATUS.wrap(buffer, 0, input.length);
                    sink += f.tail() + f.kind().code() + f.after() + f.first() + f.last() + f.quorum();
                }
                case TAIL_DATA -> {
                    TailDataDecoder f = TAIL_DATA.wrap(buffer, 0, input.length);
                    sink += f.tail() + f.index() + f.total() + f.pieceOffset();
                    byte[] piece = new byte[f.pieceLength()];
                    f.buffer().getBytes(f.pieceAt(), piece);
                }
                case TAIL_CREDIT -> {
                    TailCreditDecoder f = TAIL_CREDIT.wrap(buffer, 0, input.length);
                    sink += f.tail() + f.grant();
                }
                case TAIL_END -> {
                    TailEndDecoder f = TAIL_END.wrap(buffer, 0, input.length);
                    sink += f.tail() + f.reason().code() + f.first() + f.last() + f.message().length();
                }
                case CLAIM -> {
                    ClaimDecoder f = CLAIM.wrap(buffer, 0, input.length);
                    byte[] key = new byte[WriterClaim.PUBLIC_KEY_LENGTH];
                    byte[] signature = new byte[WriterClaim.SIGNATURE_LENGTH];
                    f.publicKey(key);
                    f.signature(signature);
                    sink += f.epoch() + key[0] + signature[0];
                }
                case APPEND_BATCH -> {
                    AppendBatchDecoder f = APPEND_BATCH.wrap(buffer, 0, input.length);
                    sink += f.queue() + f.clientTerm() + f.epoch() + f.firstSequence();
                    int entry = f.firstEntry();
                    for (int k = 0; k < f.count(); k++) {
                        byte[] tag = new byte[WriteTag.LENGTH];
                        byte[] env = new byte[f.envelopeLength(entry)];
                        f.buffer().getBytes(f.writeTagOffset(entry), tag);
                        f.buffer().getBytes(f.envelopeOffset(entry), env);
                        sink += tag[0] + env.length;
                        entry = f.nextEntry(entry);
                    }
                    if (entry != input.length - ClientProtocol.MAC_LENGTH) {
                        throw new AssertionError("the entries end at " + entry + ", not where the MAC starts");
                    }
                }
                default -> throw new AssertionError("a type without an oracle: " + HEADER.type());
            }
        } catch (MalformedClientFrameException e) {
            return false;
        }
        blackhole = sink;
        return true;
    }

    private static long outcome(AppendOutcomeDecoder f) {
        return f.epoch() + f.writerSequence() + f.index() + f.term();
    }
}
