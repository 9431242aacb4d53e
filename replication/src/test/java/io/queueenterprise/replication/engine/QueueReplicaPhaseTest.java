package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.AckMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What each phase of a hosted queue lets it do: only an ACTIVE queue takes part in the protocol. */
@Tag("unit")
class QueueReplicaPhaseTest {
    @Test
    void aQueueTakesPartOnlyOnceOpenedAndSettled() {
        QueueReplica q = new QueueReplica(new EngineSettings.QueueSettings("orders", "FAST_DAILY",
                EngineSettings.Encryption.NONE, AckMode.ASYNC), 0);
        assertEquals(QueueReplica.Phase.OPENING, q.phase());
        for (QueueReplica.Phase p : QueueReplica.Phase.values()) {
            q.moveTo(p, "test");
            assertEquals(p != QueueReplica.Phase.OPENING, q.open(), p.name());
            assertEquals(p == QueueReplica.Phase.SETTLE_NOT_ASKED || p == QueueReplica.Phase.SETTLING, q.settling(), p.name());
            assertEquals(p == QueueReplica.Phase.ACTIVE, q.active(), p.name());
        }
    }
}
