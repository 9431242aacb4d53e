package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.AckBody;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DataEncoder;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.DescriptorEncoder;
import io.queueenterprise.replication.wire.ExcerptPartBody;
import io.queueenterprise.replication.wire.ExcerptPartEncoder;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.RefusalBody;
import io.queueenterprise.replication.wire.RefusalReason;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static io.queueenterprise.replication.engine.TestSession.FOLLOWER;
import static io.queueenterprise.replication.engine.TestSession.LEADER;
import static io.queueenterprise.replication.engine.TestSession.SESSION;
import static io.queueenterprise.replication.engine.TestSession.TERM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower's {@link FollowerSession} against its leader's publication as a {@link RecordingSink}: no media driver;
 * the queue is a real {@link ReplicaStore} in a temporary directory with its real {@link QueueWriter} thread (the
 * excerpt indexes come from a second store, the "leader's"). What it sends is decoded with the production decoders and
 * checked against the session's MAC (the follower's direction) and sequence.
 */
@Tag("unit")
class FollowerSessionTest {

    @TempDir
    Path data;

    private final TestSession session = new TestSession();
    private final RecordingSink sink = new RecordingSink();
    private final PeerLink leader = new PeerLink(LEADER, "a", sink, 1);
    private final ExpandableArrayBuffer rx = new ExpandableArrayBuffer(1024);
    private final DropCounters drops = new DropCounters();
    private QueueReplica queue;
    private ReplicaStore leaderStore;
    private FollowerSession follower;

    @BeforeEach
    void following() {
        queue = new QueueReplica(new EngineSettings.QueueSettings("orders", "FAST_DAILY", EngineSettings.Encryption.NONE,
                AckMode.ASYNC), 0);
        Path dir = data.resolve("follower").resolve("orders");
        queue.store = ReplicaStore.open(dir, RollCycleNames.of("FAST_DAILY"));
        queue.history = TermHistory.load(dir);
        queue.checksums = ExcerptChecksums.open(dir);
        queue.lastIndex = queue.store.lastIndex();
        queue.writer = new QueueWriter("b", "orders", queue.store, queue.checksums, queue.lastIndex); // as adoptOpened
        queue.acceptedIndex = queue.lastIndex;
        queue.moveTo(QueueReplica.Phase.ACTIVE, "test");
        queue.transition(ReplicaState.AWAITING_DESCRIPTOR, null);
        leaderStore = ReplicaStore.open(data.resolve("leader").resolve("orders"), RollCycleNames.of("FAST_DAILY"));
        session.establish(leader, SessionCrypto.Direction.INITIATOR_TO_RESPONDER);
        follower = new FollowerSession(new QueueReplica[] {queue}, drops,
                session.control(FOLLOWER));
    }

    @AfterEach
    void close() {
        queue.writer.close();
        queue.checksums.close();
        queue.store.close();
        leaderStore.close();
        session.close();
    }

    @Test
    void acknowledgesWhatItsWriterWroteNotWhatWasHandedOver() throws Exception {
        follower.onDescriptor(leader, descriptor(-1), TERM);
        assertEquals(ReplicaState.CATCHING_UP, queue.state());
        assertAck(0, -1, QueueStatus.State.CATCHING_UP);

        long[] index = leaderExcerpts(3);
        queue.leaderLastIndex = index[2]; // as the leader's heartbeat says
        synchronized (queue.writer) { // the writer thread writes under this lock: nothing is written while it is held
            assertTrue(follower.onData(leader, data(index, 0, 3), rx.capacity(), TERM, System.nanoTime()));
            assertEquals(index[2], queue.acceptedIndex, "handed over");
            assertEquals(1, sink.taken().size(), "no ACK for excerpts only handed over");
            // the same batch again (resent after a reconnect): nothing new, so the follower says what it holds
            assertTrue(follower.onData(leader, data(index, 0, 3), rx.capacity(), TERM, System.nanoTime()));
            assertAck(1, -1, QueueStatus.State.CATCHING_UP);
            follower.pollWriters(leader, TERM, System.nanoTime());
            assertEquals(2, sink.taken().size(), "nothing written yet: nothing more acknowledged");
        }
        awaitWritten(index[2]);
        follower.pollWriters(leader, TERM, System.nanoTime());
        assertAck(2, index[2], QueueStatus.State.LIVE); // all the leader has
        assertEquals(index[2], queue.store.lastIndex(), "what was acknowledged is in the store");
        assertSessionFrames();
    }

    /**
     * Acknowledgements are cumulative and coalesced: a batch of many excerpts is answered by one ACK carrying its last
     * index, and batches handed over within one duty cycle by one ACK of the highest index written, never one per
     * excerpt or per batch.
     */
    @Test
    void oneAckOfTheHighestIndexWrittenPerDutyCycleNotOnePerExcerpt() throws Exception {
        follower.onDescriptor(leader, descriptor(-1), TERM);
        assertEquals(List.of(FrameType.ACK), sink.types());
        long[] index = leaderExcerpts(150);
        queue.leaderLastIndex = index[149];

        assertTrue(follower.onData(leader, data(index, 0, 50), rx.capacity(), TERM, System.nanoTime()));
        awaitWritten(index[49]);
        follower.pollWriters(leader, TERM, System.nanoTime());
        follower.pollWriters(leader, TERM, System.nanoTime()); // a cycle with nothing newly written sends nothing
        assertEquals(List.of(FrameType.ACK, FrameType.ACK), sink.types(), "one ACK for a batch of 50");
        assertAck(1, index[49], QueueStatus.State.CATCHING_UP);

        synchronized (queue.writer) { // two batches handed over before the writer writes either
            assertTrue(follower.onData(leader, data(index, 50, 100), rx.capacity(), TERM, System.nanoTime()));
            assertTrue(follower.onData(leader, data(index, 100, 150), rx.capacity(), TERM, System.nanoTime()));
        }
        awaitWritten(index[149]);
        follower.pollWriters(leader, TERM, System.nanoTime());
        follower.pollWriters(leader, TERM, System.nanoTime());
        assertEquals(List.of(FrameType.ACK, FrameType.ACK, FrameType.ACK), sink.types(),
                "one ACK for 100 excerpts in two batches written between two duty cycles");
        assertAck(2, index[149], QueueStatus.State.LIVE);
        assertSessionFrames();
    }

    @Test
    void anExcerptThatDoesNotFollowIsNotStoredAndHelloSaysWhereTheCopyStands() throws Exception {
        follower.onDescriptor(leader, descriptor(-1), TERM);
        long[] index = leaderExcerpts(3);
        assertTrue(follower.onData(leader, data(index, 0, 1), rx.capacity(), TERM, System.nanoTime()));
        awaitWritten(index[0]);
        follower.pollWriters(leader, TERM, System.nanoTime());
        assertTrue(follower.onData(leader, data(index, 2, 3), rx.capacity(), TERM, System.nanoTime())); // the second is missing

        assertEquals(List.of(FrameType.ACK, FrameType.ACK, FrameType.HELLO, FrameType.ACK), sink.types(),
                "the HELLO, then what is held (nothing new was handed over)");
        assertAck(3, index[0], QueueStatus.State.CATCHING_UP);
        assertEquals(index[0], queue.acceptedIndex, "nothing past the gap handed over");
        assertEquals(ReplicaState.AWAITING_DESCRIPTOR, queue.state());
        HelloBody hello = new HelloBody().wrap(RecordingSink.decode(sink.taken().get(2)));
        assertEquals(1, hello.queueCount());
        assertEquals("orders", hello.queueName(0));
        assertEquals(index[0], hello.lastIndex(0), "what is written here");
        assertEquals(1, hello.termCount(0), "the term history the leader's DESCRIPTOR gave");
        assertEquals(TERM, hello.term(0, 0));
        assertEquals(-1, hello.previousLastIndex(0, 0));
        assertSessionFrames();
    }

    @Test
    void aHelloSaysAQueueNotOpenYetIsNotOpen() throws Exception {
        queue.moveTo(QueueReplica.Phase.SETTLING, "test");
        follower.sendHello(leader, TERM);
        HelloBody hello = new HelloBody().wrap(RecordingSink.decode(sink.taken().get(0)));
        assertEquals("orders", hello.queueName(0));
        assertEquals(HelloBody.NOT_OPEN, hello.lastIndex(0));
        assertEquals(0, hello.termCount(0));
        assertSessionFrames();
    }

    @Test
    void anExcerptLargerThanThisReplicaStoresIsRefusedAsCannotStore() throws Exception {
        follower.onDescriptor(leader, descriptor(-1), TERM);
        long[] index = leaderExcerpts(1);
        long tooLarge = queue.store.maxExcerptLength() + 1;
        assertTrue(tooLarge <= ExcerptPartBody.MAX_TOTAL_LENGTH, "the frame can say it");

        assertTrue(follower.onExcerptPart(leader, part(index[0], (int) tooLarge), TERM, System.nanoTime()));

        assertEquals(List.of(FrameType.ACK, FrameType.REFUSAL), sink.types());
        RefusalBody refusal = new RefusalBody().wrap(RecordingSink.decode(sink.taken().get(1)));
        assertEquals(RefusalReason.CANNOT_STORE, refusal.reason());
        assertEquals(0, refusal.queue());
        assertEquals(-1, refusal.detail(), "the last index held here");
        assertTrue(refusal.message().contains("at most " + queue.store.maxExcerptLength() + " bytes"), refusal.message());
        assertEquals(ReplicaState.CORRUPTED, queue.state());
        assertSessionFrames();
    }

    /** Waits (no time limit of its own: the suite's timeout) for the writer thread to have written {@code index}. */
    private void awaitWritten(long index) {
        while (queue.writer.writtenIndex() < index) {
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** The ACK at {@code at} in what was sent: queue 0, this durable index and state. */
    private void assertAck(int at, long durableIndex, QueueStatus.State state) throws Exception {
        Frame frame = RecordingSink.decode(sink.taken().get(at));
        assertEquals(FrameType.ACK, frame.type());
        AckBody ack = new AckBody().wrap(frame);
        assertEquals(0, ack.queue());
        assertEquals(durableIndex, ack.durableIndex(), "the durable index acknowledged");
        assertEquals(state, ack.state());
    }

    /** Appends {@code count} excerpts of 100 bytes to the leader's store: real indexes of the queue's roll cycle. */
    private long[] leaderExcerpts(int count) {
        long[] indexes = new long[count];
        for (int n = 0; n < count; n++) {
            byte[] bytes = new byte[100];
            Arrays.fill(bytes, (byte) n);
            indexes[n] = leaderStore.append(bytes, 0, bytes.length);
        }
        return indexes;
    }

    private DescriptorBody descriptor(long resumeAfter) throws Exception {
        FrameEncoder out = new FrameEncoder().begin(rx, 0, FrameType.DESCRIPTOR, LEADER, TERM, SESSION, 1);
        new DescriptorEncoder().begin(out, 0, resumeAfter, -1, 1).term(TERM, -1).descriptor(null);
        int length = out.finish();
        return new DescriptorBody().wrap(new Frame().wrap(rx, 0, length));
    }

    /** A DATA batch of the leader's excerpts {@code [from, to)}. */
    private DataBody data(long[] index, int from, int to) throws Exception {
        FrameEncoder out = new FrameEncoder().begin(rx, 0, FrameType.DATA, LEADER, TERM, SESSION, 2);
        DataEncoder batch = new DataEncoder().begin(out, 0, -1);
        for (int n = from; n < to; n++) {
            byte[] bytes = new byte[100];
            Arrays.fill(bytes, (byte) n);
            batch.excerpt(index[n], bytes, 0, bytes.length);
        }
        int length = out.finish();
        return new DataBody().wrap(new Frame().wrap(rx, 0, length));
    }

    /** The first piece (16 bytes) of an excerpt of {@code totalLength} bytes. */
    private ExcerptPartBody part(long index, int totalLength) throws Exception {
        FrameEncoder out = new FrameEncoder().begin(rx, 0, FrameType.EXCERPT_PART, LEADER, TERM, SESSION, 2);
        new ExcerptPartEncoder().encode(out, 0, -1, index, totalLength, 0, new byte[16], 0, 16);
        int length = out.finish();
        return new ExcerptPartBody().wrap(new Frame().wrap(rx, 0, length));
    }


    /** Every frame sent: this session's, MACed in the follower's direction, sequences 1, 2, 3... */
    private void assertSessionFrames() throws Exception {
        sink.assertSessionFrames(FOLLOWER, TERM, SESSION, session.mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER),
                session.mac(SessionCrypto.Direction.RESPONDER_TO_INITIATOR), true);
    }

}
