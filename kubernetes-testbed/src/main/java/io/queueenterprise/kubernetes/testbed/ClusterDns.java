package io.queueenterprise.kubernetes.testbed;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The test bed's cluster DNS: the part of CoreDNS's {@code kubernetes} plugin that the tests need, answered from the
 * API server. The kubelet points every pod at it ({@code clusterDNS} in {@code node.sh}'s kubelet configuration), so a
 * StatefulSet's pods find each other by the names they are given in production:
 * {@code <hostname>.<subdomain>.<namespace>.svc.<domain>} (the pod with that {@code spec.hostname} and
 * {@code spec.subdomain}, ready or not, as a headless Service with {@code publishNotReadyAddresses} publishes it) and
 * {@code <service>.<namespace>.svc.<domain>} (a headless Service: its pods' addresses; another: its cluster IP).
 *
 * <p>UDP, A records only (an AAAA question for a known name gets an empty answer, so resolvers do not wait), TTL 5 s.
 * Names outside the cluster domain are refused: it forwards nothing (test traffic stays on this machine). Answers come
 * straight from the API server, so a pod recreated with a new address is found under its name at once. One thread;
 * the tests' lookups are few.
 */
public final class ClusterDns implements AutoCloseable {
    private static final int TTL_SECONDS = 5;
    private static final int TYPE_A = 1;
    private static final int TYPE_AAAA = 28;
    private static final int RCODE_NXDOMAIN = 3;
    private static final int RCODE_REFUSED = 5;
    private static final int RCODE_FORMERR = 1;

    private final KubernetesClient client;
    private final String zone;
    private final DatagramSocket socket;
    private final Thread server;

    private ClusterDns(KubernetesClient client, String clusterDomain, DatagramSocket socket) {
        this.client = client;
        this.zone = ".svc." + clusterDomain.toLowerCase(Locale.ROOT);
        this.socket = socket;
        this.server = new Thread(this::serve, "cluster-dns");
        server.setDaemon(true);
    }

    /** Serves on {@code address}:{@code port} until closed. */
    public static ClusterDns start(KubernetesClient client, String clusterDomain, InetAddress address, int port) {
        DatagramSocket socket;
        try {
            socket = new DatagramSocket(new InetSocketAddress(address, port));
        } catch (SocketException e) {
            throw new TestbedException("cannot serve the cluster DNS on " + address.getHostAddress() + ":" + port + ": " + e.getMessage(), e);
        }
        ClusterDns dns = new ClusterDns(client, clusterDomain, socket);
        dns.server.start();
        return dns;
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    private void serve() {
        byte[] buffer = new byte[512];
        while (!socket.isClosed()) {
            DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(packet);
                byte[] answer = answer(ByteBuffer.wrap(packet.getData(), 0, packet.getLength()));
                if (answer != null) {
                    socket.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
                }
            } catch (IOException e) {
                if (!socket.isClosed()) {
                    System.err.println("[kubernetes-testbed] cluster DNS: " + e.getMessage());
                }
            } catch (RuntimeException e) { // the API server refusing a lookup must not end the server
                System.err.println("[kubernetes-testbed] cluster DNS lookup failed: " + e);
            }
        }
    }

    /** The response to one query message, or null for something that is not a query. */
    byte[] answer(ByteBuffer query) {
        if (query.remaining() < 12) {
            return null;
        }
        int id = query.getShort(0) & 0xFFFF;
        int flags = query.getShort(2) & 0xFFFF;
        int questions = query.getShort(4) & 0xFFFF;
        if ((flags & 0x8000) != 0) {
            return null; // a response, not a query
        }
        if (questions != 1) {
            return header(id, flags, RCODE_FORMERR, 0, 0);
        }
        query.position(12);
        StringBuilder name = new StringBuilder();
        int length;
        while (query.hasRemaining() && (length = query.get() & 0xFF) != 0) {
            if (length > 63 || length > query.remaining()) {
                return header(id, flags, RCODE_FORMERR, 0, 0);
            }
            byte[] label = new byte[length];
            query.get(label);
            name.append(name.length() == 0 ? "" : ".").append(new String(label, StandardCharsets.US_ASCII));
        }
        if (query.remaining() < 4) {
            return header(id, flags, RCODE_FORMERR, 0, 0);
        }
        int type = query.getShort() & 0xFFFF;
        query.getShort(); // class
        byte[] question = new byte[query.position() - 12];
        query.get(12, question);

        String fullName = name.toString().toLowerCase(Locale.ROOT);
        if (!fullName.endsWith(zone)) {
            return header(id, flags, RCODE_REFUSED, 1, 0, question);
        }
        List<InetAddress> addresses = lookUp(fullName.substring(0, fullName.length() - zone.length()).split("\\."));
        if (addresses.isEmpty()) {
            return header(id, flags, RCODE_NXDOMAIN, 1, 0, question);
        }
        List<InetAddress> answers = type == TYPE_A ? addresses : List.of(); // AAAA and others: the name exists, no record
        ByteBuffer response = ByteBuffer.allocate(12 + question.length + answers.size() * 16);
        response.put(header(id, flags, 0, 1, answers.size(), question));
        for (InetAddress address : answers) {
            response.putShort((short) 0xC00C) // the question's name
                .putShort((short) TYPE_A).putShort((short) 1)
                .putInt(TTL_SECONDS).putShort((short) 4).put(address.getAddress());
        }
        return response.array();
    }

    /** Addresses for {@code [hostname, subdomain, namespace]} or {@code [service, namespace]}; empty when unknown. */
    private List<InetAddress> lookUp(String[] labels) {
        List<InetAddress> addresses = new ArrayList<>();
        if (labels.length == 3) {
            for (Pod pod : client.pods().inNamespace(labels[2]).list().getItems()) {
                if (labels[0].equals(pod.getSpec().getHostname()) && labels[1].equals(pod.getSpec().getSubdomain())) {
                    addIfIpv4(addresses, pod.getStatus() == null ? null : pod.getStatus().getPodIP());
                }
            }
        } else if (labels.length == 2) {
            Service service = client.services().inNamespace(labels[1]).withName(labels[0]).get();
            if (service == null) {
                return addresses;
            }
            String clusterIp = service.getSpec().getClusterIP();
            if (clusterIp != null && !"None".equals(clusterIp)) {
                addIfIpv4(addresses, clusterIp);
            } else if (service.getSpec().getSelector() != null && !service.getSpec().getSelector().isEmpty()) {
                Map<String, String> selector = service.getSpec().getSelector();
                for (Pod pod : client.pods().inNamespace(labels[1]).withLabels(selector).list().getItems()) {
                    addIfIpv4(addresses, pod.getStatus() == null ? null : pod.getStatus().getPodIP());
                }
            }
        }
        return addresses;
    }

    private static void addIfIpv4(List<InetAddress> addresses, String ip) {
        if (ip == null || ip.isEmpty() || ip.indexOf(':') >= 0) {
            return;
        }
        try {
            addresses.add(InetAddress.getByName(ip)); // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            // not an address: skip it
        }
    }

    private static byte[] header(int id, int queryFlags, int rcode, int questions, int answers, byte[]... question) {
        // QR, AA, the query's opcode and RD bits, no recursion available
        int flags = 0x8000 | 0x0400 | (queryFlags & 0x7900) | rcode;
        ByteBuffer header = ByteBuffer.allocate(12 + (question.length == 0 ? 0 : question[0].length));
        header.putShort((short) id).putShort((short) flags).putShort((short) questions).putShort((short) answers)
            .putShort((short) 0).putShort((short) 0);
        if (question.length > 0) {
            header.put(question[0]);
        }
        return header.array();
    }

    @Override
    public void close() {
        socket.close();
        try {
            server.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
