package io.queueenterprise.replication.wire;

import io.queueenterprise.replication.QueueStatus;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An ACK's state byte is a protocol code from a fixed table, not {@link QueueStatus.State}'s ordinal: what a byte means
 * between two nodes cannot change with the Java enum's order.
 */
@Tag("unit")
class AckStateCodeTest {
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);

    private Frame ack(int stateCode) throws MalformedFrameException {
        int length = new FrameEncoder().begin(buffer, 0, FrameType.ACK, 1, 2, 77, 2).u16(3).u8(stateCode).i64(32).finish();
        return new Frame().wrap(buffer, 0, length);
    }

    @Test
    void theWireCodesAreTheFixedTable() throws MalformedFrameException {
        // the table of wire format 1 (it equals the enum's declaration order then, so no byte on the wire changed)
        Object[][] table = {
                {0, QueueStatus.State.LIVE}, {1, QueueStatus.State.CATCHING_UP}, {2, QueueStatus.State.BEHIND_RETENTION},
                {3, QueueStatus.State.DISK_FULL}, {4, QueueStatus.State.CORRUPTED}, {5, QueueStatus.State.STOPPED}};
        Set<QueueStatus.State> seen = EnumSet.noneOf(QueueStatus.State.class);
        for (Object[] row : table) {
            int code = (Integer) row[0];
            QueueStatus.State state = (QueueStatus.State) row[1];
            assertEquals(code, ReplicaStateCode.code(state), state.toString());
            AckBody body = new AckBody().wrap(ack(code));
            assertSame(state, body.state(), "code " + code);
            assertEquals(3, body.queue());
            assertEquals(32, body.durableIndex());
            seen.add(state);
        }
        assertEquals(EnumSet.allOf(QueueStatus.State.class), seen, "every state has a code");
    }

    @Test
    void anUnknownStateCodeIsRefusedNamingTheField() throws MalformedFrameException {
        Frame frame = ack(6);
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> new AckBody().wrap(frame));
        assertTrue(e.getMessage().contains("state") && e.getMessage().contains("6"), e.getMessage());
    }
}
