package io.queueenterprise.operator.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** AdminClient against {@link StandInNode}, a stand-in for the node's admin endpoint speaking the documented contract. */
@org.junit.jupiter.api.Tag("unit")
class AdminClientTest {
    private static final String TOKEN = "s3cret-token";
    private final List<String> journal = Collections.synchronizedList(new ArrayList<>());
    private StandInNode node;

    @BeforeEach
    void start() throws IOException {
        node = new StandInNode("orders-1", TOKEN, Set.of("orders-0", "orders-1", "orders-2"), journal).durable("orders", 41);
    }

    @AfterEach
    void stop() {
        node.close();
    }

    @Test
    void readsStatus() throws AdminException {
        NodeStatusView status = node.client(TOKEN).status();
        assertEquals("orders-1", status.nodeId());
        assertEquals("STANDBY", status.role());
        assertEquals(41, status.durableIndex("orders"));
        assertEquals(-1, status.durableIndex("no-such-queue"));
    }

    @Test
    void promoteFollowFenceCarryTheTerm() throws AdminException {
        AdminClient client = node.client(TOKEN);
        assertEquals("LEADER", client.promote(3).role());
        assertEquals(3, node.term());
        assertEquals("FENCED", client.fence(4).role());
        NodeStatusView following = client.follow("orders-0", 5);
        assertEquals("FOLLOWER", following.role());
        assertEquals("orders-0", following.leaderNodeId());
        assertEquals(List.of("promote orders-1 3", "fence orders-1 4", "follow orders-1 5"), journal);
    }

    @Test
    void aWrongTokenIsUnauthorizedAndChangesNothing() {
        AdminException refused = assertThrows(AdminException.class, () -> node.client("guess").promote(9));
        assertEquals(AdminException.Reason.UNAUTHORIZED, refused.reason());
        assertEquals("STANDBY", node.role());
        assertEquals(1, node.unauthorized());
    }

    @Test
    void aStaleTermIsTyped() throws AdminException {
        node.client(TOKEN).promote(7);
        AdminException stale = assertThrows(AdminException.class, () -> node.client(TOKEN).promote(7));
        assertEquals(AdminException.Reason.STALE_TERM, stale.reason());
        assertEquals(AdminException.Reason.STALE_TERM,
            assertThrows(AdminException.class, () -> node.client(TOKEN).follow("orders-0", 6)).reason());
    }

    @Test
    void anUnknownPeerIsTyped() {
        AdminException unknown = assertThrows(AdminException.class, () -> node.client(TOKEN).follow("elsewhere-9", 1));
        assertEquals(AdminException.Reason.UNKNOWN_PEER, unknown.reason());
        assertEquals(true, unknown.getMessage().contains("elsewhere-9"), unknown.getMessage());
    }

    @Test
    void aClosedPortIsUnreachable() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            closedPort = socket.getLocalPort();
        }
        AdminClient client = new AdminClient(HttpClient.newHttpClient(), "orders-2", URI.create("http://127.0.0.1:" + closedPort),
            TOKEN, Duration.ofSeconds(2));
        assertEquals(AdminException.Reason.UNREACHABLE, assertThrows(AdminException.class, client::status).reason());
    }
}
