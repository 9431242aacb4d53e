package io.queueenterprise.cli;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.BitSet;

/**
 * A child JVM for {@link NetworkLabTest}: {@code echo PORT} returns every datagram to its sender (for at most two
 * minutes); {@code probe HOST PORT COUNT} sends COUNT numbered datagrams about a millisecond apart, collects echoes until one
 * second passes without any, and prints {@code received=N duplicates=D reordered=R minRttMicros=M}.
 */
public final class UdpProbe {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("echo")) {
            try (DatagramSocket socket = new DatagramSocket(Integer.parseInt(args[1]))) {
                socket.setReceiveBufferSize(1 << 20);
                socket.setSoTimeout(120_000); // bounded: a forgotten echo server ends by itself
                byte[] buffer = new byte[64];
                System.out.println("READY");
                while (true) {
                    DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
                    socket.receive(packet);
                    socket.send(new DatagramPacket(buffer, packet.getLength(), packet.getSocketAddress()));
                }
            } catch (SocketTimeoutException idle) {
                return;
            }
        }
        InetSocketAddress target = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        int count = Integer.parseInt(args[3]);
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.setReceiveBufferSize(1 << 20);
            for (int i = 0; i < count; i++) {
                byte[] b = ByteBuffer.allocate(12).putInt(i).putLong(System.nanoTime()).array();
                socket.send(new DatagramPacket(b, b.length, target));
                Thread.sleep(1); // paced: a burst would overflow socket buffers, which is not the fault under test
            }
            socket.setSoTimeout(1000);
            BitSet seen = new BitSet(count);
            int received = 0;
            int duplicates = 0;
            int reordered = 0;
            int last = -1;
            long minRtt = Long.MAX_VALUE;
            byte[] buffer = new byte[64];
            while (true) {
                DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
                try {
                    socket.receive(packet);
                } catch (SocketTimeoutException quiet) {
                    break;
                }
                ByteBuffer in = ByteBuffer.wrap(buffer, 0, packet.getLength());
                int seq = in.getInt();
                minRtt = Math.min(minRtt, System.nanoTime() - in.getLong());
                if (seen.get(seq)) {
                    duplicates++;
                    continue;
                }
                seen.set(seq);
                received++;
                if (seq < last) {
                    reordered++;
                }
                last = Math.max(last, seq);
            }
            System.out.printf("received=%d duplicates=%d reordered=%d minRttMicros=%d%n", received, duplicates, reordered,
                    minRtt == Long.MAX_VALUE ? -1 : minRtt / 1000);
        }
    }
}
