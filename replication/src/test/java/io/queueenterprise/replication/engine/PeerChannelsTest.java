package io.queueenterprise.replication.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

@org.junit.jupiter.api.Tag("unit")
class PeerChannelsTest {
    @Test
    void onlyALoopbackPeerGetsTheLargeMtu() {
        assertEquals("aeron:udp?endpoint=127.0.0.1:7001|mtu=" + io.queueenterprise.protocol.transport.UdpChannels.LOOPBACK_MTU,
                PeerChannels.publicationChannel(new EngineSettings.Peer("a", "127.0.0.1", 7001, 0)));
        assertEquals("aeron:udp?endpoint=10.0.0.7:7001",
                PeerChannels.publicationChannel(new EngineSettings.Peer("b", "10.0.0.7", 7001, 0)),
                "a peer on another host: Aeron's default MTU, which fits an Ethernet frame");
        assertEquals("aeron:udp?endpoint=replica-1.qe:7001",
                PeerChannels.publicationChannel(new EngineSettings.Peer("c", "replica-1.qe", 7001, 0)),
                "a name is never looked up to decide");
    }
}
