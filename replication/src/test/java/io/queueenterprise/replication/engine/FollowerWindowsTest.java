package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DataEncoder;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.DescriptorEncoder;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The windows the follower's state machine decided (docs/replication.md, "Code layout"), driven frame by frame
 * through {@link FollowerSession} with no transport and no store: a queue in these states must not touch its writer
 * (there is none here, so touching it fails the test).
 */
@Tag("unit")
class FollowerWindowsTest {
    private static final long TERM = 1;

    private final QueueReplica queue = new QueueReplica(new EngineSettings.QueueSettings("orders", "FAST_DAILY",
            EngineSettings.Encryption.NONE, AckMode.ASYNC), 0);
    private final DropCounters drops = new DropCounters();
    private final FollowerSession follower = new FollowerSession(new QueueReplica[] {queue}, drops,
            new ControlFrames(1, null, null));
    private final PeerLink leader = new PeerLink(0, "a", null, 1);
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(1024);

    @BeforeEach
    void activeFollower() {
        queue.moveTo(QueueReplica.Phase.ACTIVE, "test");
        queue.transition(ReplicaState.AWAITING_DESCRIPTOR, null);
    }

    @Test
    void aQueueWaitingForItsWriterPassesFramesOverUncountedAndIsNotReportedLive() throws Exception {
        queue.transition(ReplicaState.WAITING_FOR_WRITER, null);
        assertTrue(follower.onData(leader, data(0), 64, TERM, System.nanoTime()), "the frame is consumed");
        assertEquals(0, drops.total(), "passed over on purpose, not counted");
        assertEquals(ReplicaState.WAITING_FOR_WRITER, queue.state());
        assertEquals(QueueStatus.State.CATCHING_UP, queue.reported(), "a HELLO is owed: not LIVE");
    }

    @Test
    void aDescriptorReachingAQueueWaitingForItsWriterIsLeftForTheHelloItOwes() throws Exception {
        queue.transition(ReplicaState.WAITING_FOR_WRITER, null);
        follower.onDescriptor(leader, descriptor(), TERM);
        assertEquals(ReplicaState.WAITING_FOR_WRITER, queue.state());
    }

    @Test
    void dataForAQueueThatIsNotSynchronisedIsCountedAsUnexpected() throws Exception {
        ReplicaState[] notSynchronised = {ReplicaState.AWAITING_DESCRIPTOR, ReplicaState.BEHIND_RETENTION,
                ReplicaState.DISK_FULL, ReplicaState.CORRUPTED};
        for (int i = 0; i < notSynchronised.length; i++) {
            queue.transition(notSynchronised[i], null);
            assertTrue(follower.onData(leader, data(0), 64, TERM, System.nanoTime()));
            assertEquals(i + 1, drops.total(), notSynchronised[i].name());
            assertEquals(notSynchronised[i], queue.state(), "the frame changes nothing");
        }
    }

    private DataBody data(long index) throws Exception {
        FrameEncoder out = new FrameEncoder().begin(buffer, 0, FrameType.DATA, 0, TERM, 1, 1);
        new DataEncoder().begin(out, 0, -1).excerpt(index, new byte[] {1, 2, 3}, 0, 3);
        int length = out.finish();
        return new DataBody().wrap(new Frame().wrap(buffer, 0, length));
    }

    private DescriptorBody descriptor() throws Exception {
        FrameEncoder out = new FrameEncoder().begin(buffer, 0, FrameType.DESCRIPTOR, 0, TERM, 1, 1);
        new DescriptorEncoder().begin(out, 0, -1, -1, 1).term(TERM, -1).descriptor(null);
        int length = out.finish();
        return new DescriptorBody().wrap(new Frame().wrap(buffer, 0, length));
    }
}
