package io.queueenterprise.kubernetes.testbed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayOutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/**
 * The test bed's DNS responder over a real UDP socket on loopback, for what needs no API server: names outside the
 * cluster domain are refused (nothing is forwarded), malformed questions get FORMERR, responses are not answered.
 * Answers from the API server are exercised by {@code NodeInPodsIT} (the node pods resolve each other through it).
 */
@org.junit.jupiter.api.Tag("unit")
class ClusterDnsTest {
    private static final int REFUSED = 5;
    private static final int FORMERR = 1;

    @Test
    void namesOutsideTheClusterDomainAreRefusedNotForwarded() throws Exception {
        try (ClusterDns dns = ClusterDns.start(null, "cluster.local", InetAddress.getLoopbackAddress(), 0);
             DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            socket.setSoTimeout(5_000);
            byte[] query = query(0x1234, "example.com", 1);
            socket.send(new DatagramPacket(query, query.length, dns.address()));
            DatagramPacket reply = new DatagramPacket(new byte[512], 512);
            socket.receive(reply);
            ByteBuffer answer = ByteBuffer.wrap(reply.getData(), 0, reply.getLength());
            assertEquals(0x1234, answer.getShort(0) & 0xFFFF, "the query's id");
            int flags = answer.getShort(2) & 0xFFFF;
            assertEquals(0x8000, flags & 0x8000, "a response");
            assertEquals(REFUSED, flags & 0xF, "refused");
            assertEquals(0x0100, flags & 0x0100, "RD copied from the query");
            assertEquals(1, answer.getShort(4), "the question echoed");
            assertEquals(0, answer.getShort(6), "no answer");
            assertArrayEquals(Arrays.copyOfRange(query, 12, query.length), Arrays.copyOfRange(reply.getData(), 12, reply.getLength()));
        }
    }

    @Test
    void malformedQuestionsGetFormErrAndResponsesNothing() {
        ClusterDns dns = ClusterDns.start(null, "cluster.local", InetAddress.getLoopbackAddress(), 0);
        try {
            byte[] twoQuestions = query(7, "a.svc.cluster.local", 1);
            twoQuestions[5] = 2;
            assertEquals(FORMERR, dns.answer(ByteBuffer.wrap(twoQuestions))[3] & 0xF);
            byte[] truncated = Arrays.copyOf(query(8, "a.svc.cluster.local", 1), 20);
            assertEquals(FORMERR, dns.answer(ByteBuffer.wrap(truncated))[3] & 0xF);
            byte[] response = query(9, "a.svc.cluster.local", 1);
            response[2] |= (byte) 0x80;
            assertNull(dns.answer(ByteBuffer.wrap(response)), "a response is not a query");
            assertNull(dns.answer(ByteBuffer.wrap(new byte[5])), "shorter than a header");
        } finally {
            dns.close();
        }
    }

    private static byte[] query(int id, String name, int type) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(12).putShort((short) id).putShort((short) 0x0100).putShort((short) 1).array());
        for (String label : name.split("\\.")) {
            out.write(label.length());
            out.writeBytes(label.getBytes(StandardCharsets.US_ASCII));
        }
        out.write(0);
        out.writeBytes(ByteBuffer.allocate(4).putShort((short) type).putShort((short) 1).array());
        return out.toByteArray();
    }
}
