package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.ExcerptOpener;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.KeyRingSource;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.QueueKey;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The keys of one encrypted queue: the current key ring (swapped whole on rotation, read by each
 * sealer and opener with one volatile read per excerpt) checked against the fingerprints the queue's
 * descriptor recorded, so a wrong key is refused before it writes or reads anything.
 */
final class QueueKeys implements Supplier<KeyRing>, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(QueueKeys.class.getName());

    private final Path queueDir;
    private final QueueIdentity identity;
    private final KeyRingSource source; // null: a fixed ring
    private final boolean readOnly;
    private volatile QueueDescriptor descriptor;
    private volatile KeyRing ring;
    private ScheduledExecutorService reloader;

    private QueueKeys(Path queueDir, QueueDescriptor descriptor, KeyRingSource source, boolean readOnly) {
        this.queueDir = queueDir;
        this.descriptor = descriptor;
        this.identity = new QueueIdentity(descriptor.name(), descriptor.incarnationId());
        this.source = source;
        this.readOnly = readOnly;
    }

    static QueueKeys fixed(Path queueDir, QueueDescriptor descriptor, KeyRing ring, boolean readOnly) {
        QueueKeys keys = new QueueKeys(queueDir, descriptor, null, readOnly);
        keys.install(ring);
        return keys;
    }

    static QueueKeys fromDirectory(Path queueDir, QueueDescriptor descriptor, Path keyDirectory, boolean readOnly,
                                   Duration reloadInterval) {
        KeyRingSource source = new KeyRingSource(keyDirectory);
        QueueKeys keys = new QueueKeys(queueDir, descriptor, source, readOnly);
        keys.install(source.load());
        if (reloadInterval != null) {
            keys.startReloading(reloadInterval);
        }
        return keys;
    }

    @Override
    public KeyRing get() {
        return ring;
    }

    QueueDescriptor descriptor() {
        return descriptor;
    }

    ExcerptSealer newSealer(CipherMode mode, CryptoEngine engine) {
        return new ExcerptSealer(identity, this, mode, engine);
    }

    ExcerptOpener newOpener(CipherMode mode, CryptoEngine engine) {
        return new ExcerptOpener(identity, this, mode, engine);
    }

    synchronized boolean reload() {
        if (source == null) {
            return false;
        }
        source.reloadIfChanged();
        // Compare with what this queue installed, not with what the source read last: a ring refused
        // once stays refused (and reported) until the directory is fixed.
        KeyRing latest = source.current();
        if (latest == ring) {
            return false;
        }
        install(latest);
        return true;
    }

    /** Verifies the ring against the recorded fingerprints, records the active key's, then publishes it. */
    private synchronized void install(KeyRing candidate) {
        QueueDescriptor current = descriptor;
        for (Map.Entry<Integer, Long> recorded : current.keyFingerprints().entrySet()) {
            int keyId = recorded.getKey();
            if (candidate.contains(keyId) && fingerprint(candidate, keyId) != recorded.getValue()) {
                throw wrongKey(keyId);
            }
        }
        int active = candidate.activeKeyId();
        if (!current.keyFingerprints().containsKey(active) && !readOnly) {
            long fingerprint = fingerprint(candidate, active);
            QueueDescriptor updated = QueueDescriptor.recordFingerprint(queueDir, active, fingerprint);
            if (updated.keyFingerprints().get(active) != fingerprint) {
                throw wrongKey(active); // another process recorded a different key under this id first
            }
            descriptor = updated;
        }
        ring = candidate;
    }

    /** The key check value of a key id for this queue; the derived key material is wiped at once. */
    private long fingerprint(KeyRing candidate, int keyId) {
        QueueKey derived = QueueKey.derive(candidate.key(keyId), identity);
        try {
            return derived.fingerprint();
        } finally {
            derived.destroy();
        }
    }

    private QueueConfigurationException wrongKey(int keyId) {
        return new QueueConfigurationException(descriptor.name(), QueueConfigurationException.Problem.WRONG_KEY,
                "key id " + keyId + " is not the key this queue was written with (fingerprint mismatch)");
    }

    private void startReloading(Duration interval) {
        reloader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "qe-key-reload-" + identity.name());
            t.setDaemon(true);
            return t;
        });
        long millis = Math.max(1, interval.toMillis());
        reloader.scheduleWithFixedDelay(() -> {
            try {
                if (reload()) {
                    LOG.log(System.Logger.Level.INFO, "queue ''{0}'': key ring reloaded, active key id {1}",
                            identity.name(), ring.activeKeyId());
                }
            } catch (RuntimeException e) {
                // Keep serving with the current ring; the message names files and key ids, never key bytes.
                LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': key reload refused, keeping the current ring: {1}",
                        identity.name(), e.getMessage());
            }
        }, millis, millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        if (reloader != null) {
            reloader.shutdownNow();
        }
    }
}
