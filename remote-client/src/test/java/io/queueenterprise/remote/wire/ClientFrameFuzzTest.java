package io.queueenterprise.remote.wire;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client-facing decoder throws nothing but {@link MalformedClientFrameException} and never reads outside the
 * frame: after a successful wrap the oracle reads every field the type offers (an out-of-bounds read throws
 * IndexOutOfBoundsException from Agrona's bounds checks, which fails the test).
 */
class ClientFrameFuzzTest {
    /** Where the oracle's reads go, so none is optimised away. */
    static volatile long blackhole;

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
            if (mutant.length >= ClientFrame.HEADER_LENGTH && random.nextInt(3) > 0) {
                new UnsafeBuffer(mutant).putInt(4, mutant.length, ClientFrame.ORDER); // keep the length in step: reach the bodies
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
                () -> new ClientFrame().wrap(new UnsafeBuffer(sample), 8, sample.length));
        assertTrue(e.getMessage().startsWith("frame:"), e.getMessage());
    }

    @Test
    void aTruncatedBodyNamesItsField() {
        byte[] connect = ClientFrameSamples.all().get(0);
        byte[] cut = java.util.Arrays.copyOf(connect, connect.length - 3);
        new UnsafeBuffer(cut).putInt(4, cut.length, ClientFrame.ORDER);
        MalformedClientFrameException e = assertThrows(MalformedClientFrameException.class,
                () -> new ClientFrame().wrap(new UnsafeBuffer(cut), 0, cut.length));
        assertEquals("reply host: needs 9 bytes, 8 left", e.getMessage());
    }

    /** True when the frame decoded; reads every field of its type. */
    private static boolean decode(byte[] input) {
        ClientFrame f = new ClientFrame();
        try {
            f.wrap(new UnsafeBuffer(input), 0, input.length);
        } catch (MalformedClientFrameException e) {
            return false;
        }
        long sink = f.connection() + f.sequence() + f.macOffset();
        byte[] scratch = new byte[96];
        switch (f.type()) {
            case CONNECT -> {
                f.bytesAt(0, scratch, 32);
                sink += f.queueName().length() + f.host().length() + f.port();
            }
            case CHALLENGE -> f.bytesAt(0, scratch, 96);
            case PROOF -> f.bytesAt(0, scratch, 32);
            case CONNECTED -> sink += f.connectedTerm() + (f.leads() ? 1 : 0) + f.ackModeCode() + f.connectedQueue()
                    + f.maxEnvelope() + f.host().length() + f.port() + f.descriptor().length;
            case APPEND -> {
                sink += f.appendQueue() + f.appendTerm() + f.appendEpoch() + f.appendSequence() + f.envelopeLength();
                byte[] env = new byte[f.envelopeLength()];
                f.buffer().getBytes(f.envelopeOffset(), env);
            }
            case APPEND_ACK, APPEND_PENDING -> sink += f.ackEpoch() + f.ackSequence() + f.ackIndex() + f.ackTerm();
            case REFUSED -> sink += f.refusal().code() + f.refusedEpoch() + f.refusedSequence() + f.refusedTerm()
                    + f.host().length() + f.port() + f.message().length();
            case TAIL_OPEN -> sink += f.openQueue() + f.tailFrom().code() + f.tailMode().code() + f.openCredit()
                    + f.openTail() + f.openIndex();
            case TAIL_STATUS -> sink += f.statusTail() + f.statusKind() + f.statusAfter() + f.statusFirst() + f.statusLast()
                    + f.statusQuorum();
            case TAIL_DATA -> {
                sink += f.dataTail() + f.dataIndex() + f.dataTotal() + f.dataPieceOffset();
                byte[] piece = new byte[f.dataPieceLength()];
                f.buffer().getBytes(f.dataPieceAt(), piece);
            }
            case TAIL_CREDIT -> sink += f.creditTail() + f.creditGrant();
            case TAIL_END -> sink += f.tailEndTail() + f.tailEndReason().code() + f.tailEndFirst() + f.tailEndLast()
                    + f.message().length();
            default -> throw new AssertionError("a type without an oracle: " + f.type());
        }
        blackhole = sink;
        return true;
    }
}
