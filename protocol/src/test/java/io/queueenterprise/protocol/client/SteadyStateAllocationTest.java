package io.queueenterprise.protocol.client;

import io.queueenterprise.crypto.AllocationCounter;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hot-path frames allocate nothing once warm: APPEND, APPEND_BATCH and their APPEND_ACK/APPEND_PENDING, TAIL_DATA, TAIL_STATUS
 * and TAIL_CREDIT, each encoded, MAC-signed, verified and decoded as the receiver does (one decoder set, dispatch on
 * the type). Uses the per-thread allocation counter (deterministic, not timing).
 */
@Tag("unit")
class SteadyStateAllocationTest {
    private static final int WARMUP = 30_000;
    private static final int MEASURED = 100_000;

    private final UnsafeBuffer onHeap = new UnsafeBuffer(new byte[4096]);
    private final UnsafeBuffer offHeap = new UnsafeBuffer(ByteBuffer.allocateDirect(4096)); // as an Aeron term is
    private final ClientFrameDecoders in = new ClientFrameDecoders();
    private final AppendEncoder append = new AppendEncoder();
    private final AppendBatchEncoder batch = new AppendBatchEncoder();
    private final UnsafeBuffer window = new UnsafeBuffer(new byte[1024]);
    private final AppendAckEncoder ack = new AppendAckEncoder();
    private final AppendPendingEncoder pending = new AppendPendingEncoder();
    private final TailDataEncoder data = new TailDataEncoder();
    private final TailStatusEncoder status = new TailStatusEncoder();
    private final TailCreditEncoder credit = new TailCreditEncoder();
    private final ClientFrameMac mac;

    SteadyStateAllocationTest() {
        byte[] secret = new byte[32];
        Arrays.fill(secret, (byte) 5);
        try (ClientCredential credential = ClientCredential.of(secret)) {
            mac = credential.sessionMac(7, new byte[32], new byte[32], new byte[32], new byte[32], new byte[32], "");
        }
    }

    @Test
    void hotPathFramesAllocateNothing() {
        AllocationCounter counter = AllocationCounter.enabled();
        run(WARMUP);
        counter.assertSeesAllocation();
        long[] rounds = counter.threeRounds(() -> run(MEASURED));
        long allocated = AllocationCounter.least(rounds);
        assertTrue(allocated < 1024, Arrays.toString(rounds) + " bytes per round of " + MEASURED + " times six frames");
    }

    private long run(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            UnsafeBuffer b = (i & 1) == 0 ? onHeap : offHeap;
            int length = append.wrap(b, 0).encodeAround(7, i, 0, 3, 99, i, 200);
            sum += roundTrip(b, length) == in.append ? in.append.writerSequence() : -1;
            length = batch.wrap(b, 0).begin(7, i, 0, 3, 99, i).entry(window, 0, 40).entry(window, 100, 200).entry(window, 0, 0).end();
            if (roundTrip(b, length) == in.appendBatch) {
                for (int k = 0, e = in.appendBatch.firstEntry(); k < in.appendBatch.count(); k++, e = in.appendBatch.nextEntry(e)) {
                    sum += in.appendBatch.envelopeLength(e) + in.appendBatch.envelopeOffset(e);
                }
            }
            length = (i & 2) == 0 ? ack.wrap(b, 0).begin(7, i, 99, 3).index(1000 + i).index(1001 + i).end(i)
                    : pending.wrap(b, 0).encode(7, i, 99, i, 1000 + i, 3);
            ClientFrameDecoder f = roundTrip(b, length);
            sum += f == in.appendAck ? in.appendAck.index() : in.appendPending.index();
            length = data.wrap(b, 0).encodeAround(7, i, 5, 1000 + i, 1000, 0, 1000);
            sum += roundTrip(b, length) == in.tailData ? in.tailData.pieceLength() : -1;
            length = status.wrap(b, 0).encode(7, i, 5, TailStatusKind.ALIVE, i, -1, -1, i);
            sum += roundTrip(b, length) == in.tailStatus ? in.tailStatus.kind().code() : -1;
            length = credit.wrap(b, 0).encode(7, i, 5, 64);
            sum += roundTrip(b, length) == in.tailCredit ? in.tailCredit.grant() : -1;
        }
        return sum;
    }

    private ClientFrameDecoder roundTrip(UnsafeBuffer b, int length) {
        mac.sign(b, 0, length);
        ClientFrameDecoder f;
        try {
            f = in.wrap(b, 0, length);
        } catch (MalformedClientFrameException e) {
            throw new AssertionError("a frame just encoded does not decode", e);
        }
        if (!mac.verify(f)) {
            throw new AssertionError("MAC does not verify: " + f.type());
        }
        return f;
    }
}
