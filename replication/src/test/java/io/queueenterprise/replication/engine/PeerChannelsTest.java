package io.queueenterprise.replication.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@org.junit.jupiter.api.Tag("unit")
class PeerChannelsTest {
    @Test
    void onlyALoopbackPeerGetsTheLargeMtu() {
        assertEquals("aeron:udp?endpoint=127.0.0.1:7001|mtu=" + PeerChannels.LOOPBACK_MTU,
                PeerChannels.publicationChannel(new EngineSettings.Peer("a", "127.0.0.1", 7001, 0)));
        assertEquals("aeron:udp?endpoint=10.0.0.7:7001",
                PeerChannels.publicationChannel(new EngineSettings.Peer("b", "10.0.0.7", 7001, 0)),
                "a peer on another host: Aeron's default MTU, which fits an Ethernet frame");
        assertEquals("aeron:udp?endpoint=replica-1.qe:7001",
                PeerChannels.publicationChannel(new EngineSettings.Peer("c", "replica-1.qe", 7001, 0)),
                "a name is never looked up to decide");
        assertTrue(PeerChannels.isLoopback("127.0.0.1"));
        assertTrue(PeerChannels.isLoopback("127.1.2.3"));
        assertTrue(PeerChannels.isLoopback("localhost"));
        assertTrue(PeerChannels.isLoopback("[::1]"));
        assertFalse(PeerChannels.isLoopback("127.example.com"));
        assertFalse(PeerChannels.isLoopback("::ffff:10.0.0.1"));
        assertFalse(PeerChannels.isLoopback("0.0.0.0"));
        assertEquals(0, PeerChannels.LOOPBACK_MTU % 32, "Aeron takes MTUs in multiples of 32 bytes");
    }
}
