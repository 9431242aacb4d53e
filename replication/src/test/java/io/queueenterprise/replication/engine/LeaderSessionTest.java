package io.queueenterprise.replication.engine;

import io.aeron.Publication;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.ExcerptPartBody;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.HelloEncoder;
import io.queueenterprise.replication.wire.RefusalBody;
import io.queueenterprise.replication.wire.RefusalReason;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.queueenterprise.replication.engine.TestSession.FOLLOWER;
import static io.queueenterprise.replication.engine.TestSession.LEADER;
import static io.queueenterprise.replication.engine.TestSession.SESSION;
import static io.queueenterprise.replication.engine.TestSession.TERM;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader's {@link LeaderSession} against one follower whose publication is a {@link RecordingSink}: no media
 * driver, a real {@link ReplicaStore} in a temporary directory (excerpts appended as a library would). What it sends
 * is decoded with the production decoders and checked against the session's MAC (the leader's direction) and
 * sequence.
 */
@Tag("unit")
class LeaderSessionTest {

    @TempDir
    Path data;

    private final TestSession session = new TestSession();
    private final RecordingSink sink = new RecordingSink();
    private final PeerLink follower = new PeerLink(FOLLOWER, "b", sink, 1);
    private final ExpandableArrayBuffer helloBuffer = new ExpandableArrayBuffer(1024);
    private final java.util.Map<Long, byte[]> appended = new java.util.HashMap<>();
    private QueueReplica queue;
    private ReplicaStore store;
    private LeaderSession leader;

    @BeforeEach
    void leading() {
        queue = new QueueReplica(new EngineSettings.QueueSettings("orders", "FAST_DAILY", EngineSettings.Encryption.NONE,
                AckMode.ASYNC), 0);
        Path dir = data.resolve("orders");
        store = ReplicaStore.open(dir, RollCycleNames.of("FAST_DAILY"));
        queue.store = store;
        queue.history = TermHistory.load(dir);
        queue.checksums = ExcerptChecksums.open(dir);
        queue.descriptorWatch = new DescriptorWatch(dir);
        queue.moveTo(QueueReplica.Phase.ACTIVE, "test");
        queue.history.append(TERM, -1); // as RoleController.leadQueue does for an empty queue
        queue.selfTail = store.rawTailer();
        queue.selfTail.toStart();
        queue.transition(ReplicaState.LEADING, "");
        session.establish(follower, SessionCrypto.Direction.RESPONDER_TO_INITIATOR);
        ControlFrames control = session.control(LEADER);
        leader = new LeaderSession(LEADER, new QueueReplica[] {queue}, new PeerLink[] {null, follower}, new DropCounters(), control);
        leader.holdDescriptorChecks(true); // the descriptor is offered on HELLO and when the first excerpt shows one
    }

    @AfterEach
    void close() {
        follower.dropSession(); // closes the follower's tailer
        queue.selfTail.close();
        queue.checksums.close();
        store.close();
        session.close();
    }

    @Test
    void answersHelloWithTheDescriptorThenShipsDataFromTheExcerptAfterTheFollowersLast() throws Exception {
        byte[] descriptor = "the leader's descriptor".getBytes(StandardCharsets.UTF_8); // not parsed by the leader
        Files.write(store.path().resolve(QueueDescriptor.FILE_NAME), descriptor);
        long[] index = append(10, 100);

        leader.onHello(follower, hello("orders", index[3]), TERM);
        leader.work(System.nanoTime(), TERM, true);

        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.DATA), sink.types());
        DescriptorBody d = new DescriptorBody().wrap(RecordingSink.decode(sink.taken().get(0)));
        assertEquals(0, d.queue());
        assertEquals(index[3], d.resumeAfter(), "resume after the last excerpt the copies share");
        assertEquals(index[0], d.leaderFirstIndex());
        assertEquals(1, d.termCount());
        assertEquals(TERM, d.term(0));
        assertEquals(-1, d.previousLastIndex(0));
        assertArrayEquals(descriptor, d.descriptor());
        assertEquals(Arrays.asList(4L, 5L, 6L, 7L, 8L, 9L), excerptsIn(sink.takenSince(1), index));
        assertSessionFrames();
    }

    /**
     * No round trip per excerpt: the leader ships what its tail found without waiting for any ACK (a second batch goes
     * while the first is unacknowledged), and one cumulative ACK of the last index moves the quorum index it publishes
     * for the library to that index; an older ACK arriving late does not move it back.
     */
    @Test
    void shipsWithoutWaitingForAcksAndOneCumulativeAckMovesTheQuorumIndex() throws Exception {
        long[] first = append(50, 100);
        leader.onHello(follower, hello("orders", -1), TERM);
        leader.work(System.nanoTime(), TERM, true);
        long[] second = append(50, 100);
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.DATA, FrameType.DATA), sink.types(),
                "the second batch went while the first was unacknowledged");
        long[] all = new long[100];
        System.arraycopy(first, 0, all, 0, 50);
        System.arraycopy(second, 0, all, 50, 50);
        List<Long> shipped = excerptsIn(sink.takenSince(1), all);
        assertEquals(100, shipped.size());
        assertEquals(-1, store.quorumIndex(), "a majority of two is both: nothing acknowledged yet");

        leader.onAck(follower, ack(second[49], 1));
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(second[49], store.quorumIndex(), "one ACK of the last index acknowledges all 100");
        assertEquals(second[49], queue.quorumIndex);

        leader.onAck(follower, ack(first[10], 2)); // reordered, late
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(second[49], store.quorumIndex(), "the watermark never moves back");
        assertSessionFrames();
    }

    /**
     * A published quorum index is an acknowledgement: a leader that may not acknowledge (its lease lapsed, e.g. it was
     * SIGSTOPped while another node was promoted, and reads its followers' buffered ACKs on resuming) publishes none;
     * once it may again (a fresh majority echoed), the index those ACKs support is published.
     */
    @Test
    void aLeaderThatMayNotAcknowledgePublishesNoQuorumIndexFromTheAcksItReads() throws Exception {
        long[] written = append(20, 100);
        leader.onHello(follower, hello("orders", -1), TERM);
        leader.work(System.nanoTime(), TERM, true);
        leader.onAck(follower, ack(written[19], 1));
        leader.work(System.nanoTime(), TERM, false);
        assertEquals(-1, store.quorumIndex(), "no watermark moves while the lease is lapsed");
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(written[19], store.quorumIndex(), "published once the leader may acknowledge again");
    }

    private final ExpandableArrayBuffer ackBuffer = new ExpandableArrayBuffer(256);

    /** The follower's ACK of queue 0 up to {@code durableIndex}. */
    private io.queueenterprise.replication.wire.AckBody ack(long durableIndex, long sequence) throws Exception {
        FrameEncoder out = new FrameEncoder().begin(ackBuffer, 0, FrameType.ACK, FOLLOWER, TERM, SESSION, sequence);
        new io.queueenterprise.replication.wire.AckEncoder().encode(out, 0, io.queueenterprise.replication.QueueStatus.State.LIVE,
                durableIndex);
        int length = out.finish();
        return new io.queueenterprise.replication.wire.AckBody().wrap(new Frame().wrap(ackBuffer, 0, length));
    }

    @Test
    void aBatchRefusedByBackPressureIsOfferedAgainWithNothingSkippedOrRepeatedAndTheNextSequence() throws Exception {
        long[] index = append(3, 100);
        leader.onHello(follower, hello("orders", -1), TERM); // DESCRIPTOR: sequence 1
        sink.refuse(Publication.BACK_PRESSURED, 1);
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(1, sink.refused().size(), "the batch was offered");
        assertEquals(1, sink.taken().size(), "and refused");
        assertTrue(follower.established(), "back-pressure keeps the session");

        // A control frame goes while the batch waits: it takes sequence 2, so the batch must go as 3.
        leader.onHello(follower, hello("trades", -1), TERM);
        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.REFUSAL), sink.types());
        RefusalBody refusal = new RefusalBody().wrap(RecordingSink.decode(sink.taken().get(1)));
        assertEquals(RefusalReason.QUEUE_MISMATCH, refusal.reason());
        assertEquals(0, refusal.queue());

        long[] more = append(2, 100);
        sink.refuse(Publication.BACK_PRESSURED, 2);
        leader.work(System.nanoTime(), TERM, true);
        leader.work(System.nanoTime(), TERM, true);
        for (int i = 0; i < 4; i++) {
            leader.work(System.nanoTime(), TERM, true);
        }

        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.REFUSAL, FrameType.DATA, FrameType.DATA), sink.types());
        long[] all = {index[0], index[1], index[2], more[0], more[1]};
        assertEquals(List.of(0L, 1L, 2L), excerptsIn(sink.takenSince(2).subList(0, 1), all),
                "the refused batch goes as it was built, before anything read since");
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), excerptsIn(sink.takenSince(2), all), "each excerpt once, in order");
        assertSessionFrames();
    }

    @Test
    void aFollowerNoLongerConnectedLosesItsSession() throws Exception {
        droppedOn(Publication.NOT_CONNECTED);
    }

    @Test
    void aPublicationAtItsMaximumPositionEndsTheSession() throws Exception {
        droppedOn(Publication.MAX_POSITION_EXCEEDED);
    }

    private void droppedOn(long result) throws Exception {
        append(3, 100);
        leader.onHello(follower, hello("orders", -1), TERM);
        sink.refuse(result, 1);
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(PeerLink.State.DISCONNECTED, follower.state());
        assertFalse(follower.progress[0].streaming, "its progress is forgotten: HELLO says where it stands again");
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(List.of(FrameType.DESCRIPTOR), sink.types(), "nothing more is offered without a session");
    }

    @Test
    void aDescriptorOwedGoesBeforeAnyMoreDataEvenWhenItsFirstOffersAreLost() throws Exception {
        leader.onHello(follower, hello("orders", -1), TERM); // the queue has no descriptor yet
        assertNull(new DescriptorBody().wrap(RecordingSink.decode(sink.taken().get(0))).descriptor());

        // The library creates the descriptor, then appends: the follower must get the descriptor first.
        byte[] descriptor = "created by the first writer".getBytes(StandardCharsets.UTF_8);
        Files.write(store.path().resolve(QueueDescriptor.FILE_NAME), descriptor);
        long[] index = append(2, 100);
        sink.refuse(Publication.NOT_CONNECTED, 2); // the DESCRIPTOR's offers in the next two cycles are lost
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(1, sink.refused().size(), "one offer per cycle: buildBatch is the one place that owes it");
        assertEquals(List.of(FrameType.DESCRIPTOR), sink.types(), "no DATA while the descriptor is owed");
        leader.work(System.nanoTime(), TERM, true);
        assertEquals(2, sink.refused().size(), "still owed, offered again before any DATA");
        assertEquals(List.of(FrameType.DESCRIPTOR), sink.types(), "no DATA while the descriptor is owed");

        leader.work(System.nanoTime(), TERM, true);
        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.DESCRIPTOR, FrameType.DATA), sink.types());
        DescriptorBody d = new DescriptorBody().wrap(RecordingSink.decode(sink.taken().get(1)));
        assertArrayEquals(descriptor, d.descriptor());
        assertEquals(index[1], d.resumeAfter(), "mid-stream: at or past everything sent, so the follower truncates nothing");
        assertEquals(List.of(0L, 1L), excerptsIn(sink.takenSince(2), index));
        assertSessionFrames(false); // the lost DESCRIPTORs kept sequences 2 and 3: the one taken is 4, the DATA 5
        assertEquals(List.of(1L, 4L, 5L), sequences());
    }

    @Test
    void anExcerptTheFollowersTailerFindsBeforeTheOwnTailWaitsForTheDescriptor() throws Exception {
        leader.holdOwnTail(true); // the excerpt completes after the own tail looked, before the follower's tailer does
        leader.onHello(follower, hello("orders", -1), TERM); // the queue has no descriptor yet
        byte[] descriptor = "created by the first writer".getBytes(StandardCharsets.UTF_8);
        Files.write(store.path().resolve(QueueDescriptor.FILE_NAME), descriptor);
        long[] index = append(2, 100);

        leader.work(System.nanoTime(), TERM, true);
        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.DESCRIPTOR, FrameType.DATA), sink.types(),
                "the descriptor the excerpt was written under, then the DATA, in the cycle that found the excerpt");
        assertArrayEquals(descriptor, new DescriptorBody().wrap(RecordingSink.decode(sink.taken().get(1))).descriptor());
        assertEquals(List.of(0L, 1L), excerptsIn(sink.takenSince(2), index));
        assertSessionFrames();
    }

    @Test
    void aFollowerWhoseNextExcerptIsInACycleTheLeaderNoLongerHoldsIsRefusedBehindRetentionAndSentNoData() throws Exception {
        long[] index = append(3, 100);
        // the follower holds up to an excerpt of an earlier cycle (same term): the leader's retention deleted that
        // cycle, so the follower can never catch up from it
        net.openhft.chronicle.queue.RollCycle cycles = RollCycleNames.of("FAST_DAILY");
        long earlierCycle = cycles.toIndex(cycles.toCycle(index[0]) - 1, 5);
        leader.onHello(follower, hello("orders", earlierCycle), TERM);
        leader.work(System.nanoTime(), TERM, true);
        leader.work(System.nanoTime(), TERM, true);

        assertEquals(List.of(FrameType.REFUSAL), sink.types(), "a refusal, and no DESCRIPTOR or DATA");
        RefusalBody refusal = new RefusalBody().wrap(RecordingSink.decode(sink.taken().get(0)));
        assertEquals(RefusalReason.BEHIND_RETENTION, refusal.reason());
        assertEquals(0, refusal.queue());
        assertEquals(index[0], refusal.detail(), "the refusal names the leader's first index");
        assertFalse(follower.progress[0].streaming, "nothing is streamed to it");
        assertEquals(io.queueenterprise.replication.QueueStatus.State.BEHIND_RETENTION, follower.progress[0].state);
        assertSessionFrames();
    }

    @Test
    void aLostHelloAnswerIsAnsweredAgainOnTheNextHelloFromWhereTheFollowerStands() throws Exception {
        long[] index = append(3, 100);
        sink.refuse(Publication.NOT_CONNECTED, 1); // the DESCRIPTOR answering HELLO is lost (a control frame is not kept)
        leader.onHello(follower, hello("orders", -1), TERM);
        assertEquals(1, sink.refused().size());
        assertEquals(FrameType.DESCRIPTOR, RecordingSink.decode(sink.refused().get(0)).type());
        leader.work(System.nanoTime(), TERM, true); // DATA the follower drops: it took no DESCRIPTOR since its HELLO

        // the follower got no answer and says HELLO again, still holding nothing
        leader.onHello(follower, hello("orders", -1), TERM);
        leader.work(System.nanoTime(), TERM, true);

        assertEquals(List.of(FrameType.DATA, FrameType.DESCRIPTOR, FrameType.DATA), sink.types());
        assertEquals(-1, new DescriptorBody().wrap(RecordingSink.decode(sink.taken().get(1))).resumeAfter(),
                "answered from where the follower stands, not from what was offered before");
        assertEquals(List.of(0L, 1L, 2L), excerptsIn(sink.takenSince(2), index), "the whole queue again, in order");
        assertSessionFrames(false); // the lost DESCRIPTOR kept sequence 1
        assertEquals(List.of(2L, 3L, 4L), sequences());
    }

    @Test
    void anExcerptTooLargeForABatchGoesInExcerptPartsBetweenTheBatches() throws Exception {
        long[] small = append(1, 100);
        byte[] large = new byte[3 * ReplicationAgent.MAX_BATCH_BYTES + 100];
        for (int i = 0; i < large.length; i++) {
            large[i] = (byte) (i * 31);
        }
        long largeIndex = store.append(large, 0, large.length);
        long[] after = append(1, 100);
        leader.onHello(follower, hello("orders", -1), TERM);
        for (int i = 0; i < 10; i++) {
            leader.work(System.nanoTime(), TERM, true);
        }

        assertEquals(List.of(FrameType.DESCRIPTOR, FrameType.DATA, FrameType.EXCERPT_PART, FrameType.EXCERPT_PART,
                FrameType.EXCERPT_PART, FrameType.EXCERPT_PART, FrameType.DATA), sink.types());
        assertEquals(List.of(0L), excerptsIn(sink.takenSince(1).subList(0, 1), small));
        ByteArrayOutputStream assembled = new ByteArrayOutputStream();
        List<Frame> parts = sink.takenSince(2).subList(0, 4);
        for (int i = 0; i < parts.size(); i++) {
            ExcerptPartBody part = new ExcerptPartBody().wrap(parts.get(i));
            assertEquals(largeIndex, part.index());
            assertEquals(large.length, part.totalLength());
            assertEquals(assembled.size(), part.partOffset(), "pieces in order, none skipped");
            assertTrue(part.bytesLength() <= ReplicationAgent.MAX_BATCH_BYTES);
            assertEquals(i == parts.size() - 1, part.isLast());
            byte[] piece = new byte[part.bytesLength()];
            part.buffer().getBytes(part.bytesOffset(), piece);
            assembled.writeBytes(piece);
        }
        assertArrayEquals(large, assembled.toByteArray());
        assertEquals(List.of(0L), excerptsIn(sink.takenSince(6), after));
        assertSessionFrames();
    }

    /** Appends {@code count} excerpts of {@code length} bytes, each filled with its own number, as a library would. */
    private long[] append(int count, int length) {
        long[] indexes = new long[count];
        for (int n = 0; n < count; n++) {
            byte[] bytes = new byte[length];
            Arrays.fill(bytes, (byte) appended.size());
            indexes[n] = store.append(bytes, 0, length);
            appended.put(indexes[n], bytes);
        }
        return indexes;
    }

    /**
     * The excerpts of the DATA frames, as positions in {@code indexes}, each checked to hold the bytes appended there.
     */
    private List<Long> excerptsIn(List<Frame> frames, long[] indexes) throws Exception {
        List<Long> positions = new ArrayList<>();
        for (Frame f : frames) {
            if (f.type() != FrameType.DATA) {
                continue;
            }
            DataBody data = new DataBody().wrap(f);
            assertEquals(0, data.queue());
            while (data.next()) {
                int n = -1;
                for (int i = 0; i < indexes.length; i++) {
                    if (indexes[i] == data.index()) {
                        n = i;
                    }
                }
                assertTrue(n >= 0, "an excerpt appended here: 0x" + Long.toHexString(data.index()));
                byte[] bytes = new byte[data.excerptLength()];
                data.buffer().getBytes(data.excerptOffset(), bytes);
                assertArrayEquals(appended.get(data.index()), bytes, "the bytes appended at that index");
                positions.add((long) n);
            }
        }
        return positions;
    }

    /** The follower's HELLO for one queue: its last index, and (if it holds any) that it followed this term from the start. */
    private HelloBody hello(String queueName, long lastIndex) throws Exception {
        FrameEncoder out = new FrameEncoder().begin(helloBuffer, 0, FrameType.HELLO, FOLLOWER, TERM, SESSION, 1);
        HelloEncoder hello = new HelloEncoder().begin(out, 1).queue(queueName, lastIndex, lastIndex < 0 ? 0 : 1);
        if (lastIndex >= 0) {
            hello.term(TERM, -1);
        }
        int length = out.finish();
        return new HelloBody().wrap(new Frame().wrap(helloBuffer, 0, length));
    }


    /** Every frame taken: this session's, MACed in the leader's direction, sequences 1, 2, 3... */
    private void assertSessionFrames() throws Exception {
        assertSessionFrames(true);
    }

    private void assertSessionFrames(boolean consecutive) throws Exception {
        sink.assertSessionFrames(LEADER, TERM, SESSION, session.mac(SessionCrypto.Direction.RESPONDER_TO_INITIATOR),
                session.mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER), consecutive);
    }

    private List<Long> sequences() throws Exception {
        List<Long> sequences = new ArrayList<>();
        for (Frame f : sink.takenSince(0)) {
            sequences.add(f.sequence());
        }
        return sequences;
    }

}
