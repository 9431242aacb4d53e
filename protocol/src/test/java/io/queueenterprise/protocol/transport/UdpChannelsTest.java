package io.queueenterprise.protocol.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@org.junit.jupiter.api.Tag("unit")
class UdpChannelsTest {
    @Test
    void onlyALoopbackEndpointGetsTheLargeMtu() {
        assertEquals("aeron:udp?endpoint=127.0.0.1:7001|mtu=" + UdpChannels.LOOPBACK_MTU, UdpChannels.publication("127.0.0.1", 7001));
        assertEquals("aeron:udp?endpoint=10.0.0.7:7001", UdpChannels.publication("10.0.0.7", 7001),
                "another host: Aeron's default MTU, which fits an Ethernet frame");
        assertEquals("aeron:udp?endpoint=replica-1.qe:7001", UdpChannels.publication("replica-1.qe", 7001),
                "a name is never looked up to decide");
        assertTrue(UdpChannels.isLoopback("127.0.0.1"));
        assertTrue(UdpChannels.isLoopback("127.1.2.3"));
        assertTrue(UdpChannels.isLoopback("localhost"));
        assertTrue(UdpChannels.isLoopback("[::1]"));
        assertFalse(UdpChannels.isLoopback("127.example.com"));
        assertFalse(UdpChannels.isLoopback("::ffff:10.0.0.1"));
        assertFalse(UdpChannels.isLoopback("0.0.0.0"));
        assertTrue(UdpChannels.isAddressLiteral("10.0.0.7"));
        assertTrue(UdpChannels.isAddressLiteral("fe80::1"));
        assertTrue(UdpChannels.isAddressLiteral("[::1]"));
        assertFalse(UdpChannels.isAddressLiteral("replica-1.qe"));
        assertEquals(0, UdpChannels.LOOPBACK_MTU % 32, "Aeron takes MTUs in multiples of 32 bytes");
    }
}
