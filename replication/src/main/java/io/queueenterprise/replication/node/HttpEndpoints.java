package io.queueenterprise.replication.node;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;

/** Binding the node's HTTP endpoints (admin, metrics) with a failure that names the port. */
final class HttpEndpoints {
    private HttpEndpoints() {
    }

    /**
     * An HTTP server bound to {@code host:port}; a port another process holds is refused in one sentence naming
     * it ("admin port tcp 127.0.0.1:7190 is in use"), where the JDK says only "Address already in use".
     */
    static HttpServer bind(String what, String host, int port) throws IOException {
        try {
            return HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (BindException e) {
            String where = what + " port tcp " + host + ":" + port;
            String reason = String.valueOf(e.getMessage());
            throw new BindException(reason.startsWith("Address already in use")
                    ? where + " is in use (another process has it bound)" : where + " cannot be bound: " + reason);
        }
    }
}
