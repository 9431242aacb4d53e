package io.queueenterprise.replication.client;

import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.config.MountedFileWatcher;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Re-reads the authorised-clients file every {@link #INTERVAL_MILLIS} ms ({@link MountedFileWatcher}: its own thread,
 * the content compared, a ConfigMap's {@code ..data} swap seen) and hands a changed set to the gateway
 * ({@link ClientGateway#authorise}). A file that
 * no longer reads or parses is logged and the set in force kept: a typo must not lock every client out.
 */
public final class AuthorisedClientsWatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AuthorisedClientsWatcher.class);
    public static final long INTERVAL_MILLIS = Long.getLong("qe.authorisedClients.intervalMillis", 1000);

    private final MountedFileWatcher watcher;

    private AuthorisedClientsWatcher(Path file, ClientGateway gateway, String nodeId, byte[] content) {
        this.watcher = new MountedFileWatcher(file, INTERVAL_MILLIS, "qe-authorised-clients-" + nodeId, new MountedFileWatcher.Listener() {
            @Override
            public boolean changed(byte[] changed) {
                try {
                    AuthorisedClients set = AuthorisedClients.read(file);
                    gateway.authorise(set);
                    LOG.info(nodeId + ": authorised clients reloaded: " + set);
                    return true;
                } catch (ReplicationException e) {
                    LOG.warn(nodeId + ": " + e.getMessage() + "; the set in force stays");
                    return false; // looked at again each interval, as the file's checks may fail outside its content
                }
            }

            @Override
            public void unreadable(IOException e, boolean sinceReadable) {
                LOG.warn(nodeId + ": authorised clients file " + file + " cannot be read (" + e.getMessage() + "); the set in force stays");
            }
        }, content);
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
        watcher.watcher.start();
        return watcher;
    }

    /** Loads the set for a gateway not started yet (the node's start). */
    public static AuthorisedClients initial(Path file) {
        return AuthorisedClients.read(file);
    }

    void checkOnce() {
        watcher.checkOnce();
    }

    @Override
    public void close() {
        watcher.close();
    }
}
