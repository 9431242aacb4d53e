package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Tag("unit")
class EngineSettingsTest {
    private static EngineSettings.Builder valid() {
        return EngineSettings.builder().nodeId("b").dataDirectory(Path.of("/tmp/x"))
                .peer("a", "127.0.0.1", 7001, 0).peer("b", "127.0.0.1", 7002, 7102)
                .queue("orders", "FAST_DAILY", EngineSettings.Encryption.NONE, AckMode.ASYNC);
    }

    @Test
    void aValidSetOfSettingsKnowsThisNodesPosition() {
        EngineSettings s = valid().build();
        assertEquals(1, s.selfPosition());
        assertEquals("b", s.self().id());
        assertEquals(0, s.peerPosition("a"));
        assertEquals(-1, s.peerPosition("z"));
        assertEquals(List.of("orders"), s.queues().stream().map(EngineSettings.QueueSettings::name).toList());
    }

    @Test
    void eachBadSettingIsRefusedWithItsFieldNamed() {
        assertField("nodeId", b -> b.nodeId(" "));
        assertField("nodeId", b -> b.nodeId("c"));
        assertField("dataDirectory", b -> b.dataDirectory(null));
        assertField("peers", b -> b.peer("a", "127.0.0.1", 7003, 0));
        assertField("peers.host", b -> b.peer("c", "", 7003, 0));
        assertField("peers.replicationPort", b -> b.peer("c", "127.0.0.1", 0, 0));
        assertField("peers.clientPort", b -> b.peer("c", "127.0.0.1", 7003, 70_000));
        assertField("queues.name", b -> b.queue("orders", "FAST_DAILY", EngineSettings.Encryption.NONE, AckMode.ASYNC));
        assertField("queues.name", b -> b.queue("x".repeat(256), "FAST_DAILY", EngineSettings.Encryption.NONE, AckMode.ASYNC));
        assertField("queues.rollCycle", b -> b.queue("q2", "HOURLY_SOMETIMES", EngineSettings.Encryption.NONE, AckMode.ASYNC));
        assertField("queues.encryption", b -> b.queue("q2", "FAST_DAILY", null, AckMode.ASYNC));
        assertField("queues.ackMode", b -> b.queue("q2", "FAST_DAILY", EngineSettings.Encryption.NONE, null));
        EngineSettings.Builder many = valid();
        for (int i = 0; i < 260; i++) {
            many.peer("p" + i, "127.0.0.1", 8000 + i, 0);
        }
        assertField("peers", b -> many);
        EngineSettings.Builder none = EngineSettings.builder().nodeId("a").dataDirectory(Path.of("/tmp/x"))
                .peer("a", "127.0.0.1", 7001, 0);
        assertField("queues", b -> none);
    }

    @Test
    void theNodeShellMapsItsDocumentToTheEnginesSettings() {
        NodeConfig config = new NodeConfig(NodeConfig.SCHEMA_VERSION, "b", Path.of("/data"),
                List.of(new NodeConfig.Peer("a", "10.0.0.1", 7001), new NodeConfig.Peer("b", "10.0.0.2", 7002, 7102)),
                Path.of("/secret/peer"),
                List.of(new NodeConfig.QueueSpec("orders", "FAST_HOURLY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                        AckMode.QUORUM, Duration.ofSeconds(2), NodeConfig.Retention.unbounded())),
                new NodeConfig.Admin("127.0.0.1", 0, Path.of("/secret/admin")), new NodeConfig.Metrics("127.0.0.1", 0),
                NodeConfig.IdleStrategySpec.BACKOFF);
        EngineSettings s = config.engineSettings();
        assertEquals("b", s.nodeId());
        assertEquals(Path.of("/data"), s.dataDirectory());
        assertEquals(List.of(new EngineSettings.Peer("a", "10.0.0.1", 7001, 0), new EngineSettings.Peer("b", "10.0.0.2", 7002, 7102)),
                s.peers());
        assertEquals(List.of(new EngineSettings.QueueSettings("orders", "FAST_HOURLY",
                EngineSettings.Encryption.AES_128_CTR_POLY1305, AckMode.QUORUM)), s.queues());
    }

    private static void assertField(String field, UnaryOperator<EngineSettings.Builder> change) {
        EngineSettings.InvalidSettingException e = assertThrows(EngineSettings.InvalidSettingException.class,
                () -> change.apply(valid()).build());
        assertEquals(field, e.field(), e.getMessage());
        assertTrue(e.getMessage().startsWith(field + ": "), e.getMessage());
    }
}
