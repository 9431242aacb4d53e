package io.queueenterprise.replication.client;

import io.queueenterprise.replication.ReplicationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Re-reads the authorised-clients file every {@link #INTERVAL_MILLIS} ms on a thread of its own (never the duty cycle:
 * file reads block) and hands a changed set to the gateway ({@link ClientGateway#authorise}). A mounted ConfigMap is
 * replaced by the kubelet (the {@code ..data} link swapped), so the content is compared, not a timestamp. A file that
 * no longer reads or parses is logged and the set in force kept: a typo must not lock every client out.
 */
public final class AuthorisedClientsWatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AuthorisedClientsWatcher.class);
    public static final long INTERVAL_MILLIS = Long.getLong("qe.authorisedClients.intervalMillis", 1000);

    private final Path file;
    private final ClientGateway gateway;
    private final String nodeId;
    private final Thread thread;
    private volatile boolean running = true;
    private byte[] lastContent;

    private AuthorisedClientsWatcher(Path file, ClientGateway gateway, String nodeId, byte[] content) {
        this.file = file;
        this.gateway = gateway;
        this.nodeId = nodeId;
        this.lastContent = content;
        this.thread = new Thread(this::run, "qe-authorised-clients-" + nodeId);
        this.thread.setDaemon(true);
    }

    /** Reads the file once (a bad one fails the start, naming the line) and watches it from then on. */
    public static AuthorisedClientsWatcher start(Path file, ClientGateway gateway, String nodeId) {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ReplicationException("authorised clients file " + file + " cannot be read: " + e.getMessage(), e);
        }
        gateway.authorise(AuthorisedClients.read(file));
        AuthorisedClientsWatcher watcher = new AuthorisedClientsWatcher(file, gateway, nodeId, content);
        watcher.thread.start();
        return watcher;
    }

    /** Loads the set for a gateway not started yet (the node's start). */
    public static AuthorisedClients initial(Path file) {
        return AuthorisedClients.read(file);
    }

    private void run() {
        while (running) {
            try {
                Thread.sleep(INTERVAL_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            checkOnce();
        }
    }

    void checkOnce() {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            LOG.warn(nodeId + ": authorised clients file " + file + " cannot be read (" + e.getMessage() + "); the set in force stays");
            return;
        }
        if (Arrays.equals(content, lastContent)) {
            return;
        }
        try {
            AuthorisedClients set = AuthorisedClients.read(file);
            lastContent = content;
            gateway.authorise(set);
            LOG.info(nodeId + ": authorised clients reloaded: " + set);
        } catch (ReplicationException e) {
            LOG.warn(nodeId + ": " + e.getMessage() + "; the set in force stays");
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
