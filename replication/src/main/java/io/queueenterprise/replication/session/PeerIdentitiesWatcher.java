package io.queueenterprise.replication.session;

import io.queueenterprise.replication.config.MountedFileWatcher;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Re-reads the peer-identities file ({@link PeerIdentitiesFile}) every {@link #INTERVAL_MILLIS} ms
 * ({@link MountedFileWatcher}, as the authorised clients are: its own thread, the path opened anew, the content
 * compared, a ConfigMap's {@code ..data} swap seen). Absent: no pins from it yet. A malformed file is refused whole: the pins in force stay, a warning names
 * the line, {@link #refusals()} counts it. Lines that cannot apply are said once per content seen.
 */
public final class PeerIdentitiesWatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerIdentitiesWatcher.class);
    public static final long INTERVAL_MILLIS = Long.getLong("qe.peerIdentities.intervalMillis", 1000);

    private final Path file;
    private final PeerIdentities identities;
    private final List<String> peerIds;
    private final int self;
    private final String nodeId;
    private final AtomicLong refusals = new AtomicLong();
    private final MountedFileWatcher watcher;

    public PeerIdentitiesWatcher(Path file, PeerIdentities identities, List<String> peerIds, int self, String nodeId) {
        this.file = file;
        this.identities = identities;
        this.peerIds = List.copyOf(peerIds);
        this.self = self;
        this.nodeId = nodeId;
        this.watcher = new MountedFileWatcher(file, INTERVAL_MILLIS, "qe-peer-identities-" + nodeId, new MountedFileWatcher.Listener() {
            @Override
            public boolean changed(byte[] content) {
                apply(content);
                return true; // a refused content is said once: it is not re-read until it changes
            }

            @Override
            public void unreadable(IOException e, boolean sinceReadable) {
                if (!(e instanceof NoSuchFileException)) {
                    LOG.warn(nodeId + ": peer identities file " + file + " cannot be read (" + e + "); the pins in force stay");
                } else if (sinceReadable) {
                    LOG.info(nodeId + ": peer identities file " + file + " is absent: no pins from it (yet)");
                }
                // pins in force stay: a ConfigMap being swapped may be absent for an instant
            }
        }, null);
    }

    /** Reads the file once, on the caller's thread (pins in force before the first handshake), then watches it. */
    public PeerIdentitiesWatcher start() {
        checkOnce();
        watcher.start();
        return this;
    }

    /** Malformed contents refused since start. Any thread. */
    public long refusals() {
        return refusals.get();
    }

    /** One look at the file; package-private for tests that drive it without the thread. */
    void checkOnce() {
        watcher.checkOnce();
    }

    private void apply(byte[] content) {
        PeerIdentitiesFile.Pins pins;
        try {
            pins = PeerIdentitiesFile.parse(new String(content, StandardCharsets.UTF_8), peerIds, identities, self);
        } catch (PeerIdentitiesFile.MalformedException e) {
            refusals.incrementAndGet();
            LOG.warn(nodeId + ": peer identities file " + file + " refused whole, " + e.getMessage() + "; the pins in force stay");
            return;
        }
        for (String line : pins.ignored()) {
            LOG.warn(nodeId + ": peer identities file " + file + ", " + line);
        }
        if (identities.applyFilePins(pins.pins())) {
            StringBuilder now = new StringBuilder();
            for (int i = 0; i < peerIds.size(); i++) {
                if (i != self) {
                    now.append(now.length() == 0 ? "" : ", ").append(peerIds.get(i)).append('=').append(identities.fingerprint(i));
                }
            }
            LOG.info(nodeId + ": peer identity pins now " + now);
        }
    }

    @Override
    public void close() {
        watcher.close();
    }
}
