package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.ExcerptOpener;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.KeyRingSource;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.QueueKey;
import io.queueenterprise.crypto.WriterEpochs;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The keys of one encrypted queue and the authenticity of its descriptor: the current key ring (swapped
 * whole on rotation, read by each sealer and opener with one volatile read per excerpt), checked against the
 * fingerprints the descriptor recorded, with the descriptor itself authenticated (HMAC-SHA256 under a key
 * derived for this queue, mode and format) before anything in it is believed. So nothing that selects how
 * bytes are interpreted comes from an unauthenticated file, and a wrong key is refused before it reads or
 * writes anything.
 */
final class QueueKeys implements Supplier<KeyRing>, AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(QueueKeys.class);

    private final Path queueDir;
    private final QueueIdentity identity;
    private final CipherMode mode;
    private final KeyRingSource source; // null: a fixed ring, owned by the application
    private final boolean readOnly;
    private volatile QueueDescriptor descriptor;
    private volatile KeyRing ring;
    /** The latest ring whose active key the descriptor has recorded: the only ring sealers see. */
    private volatile KeyRing sealingRing;
    private ScheduledExecutorService reloader;
    private boolean closed; // under this object's lock

    private QueueKeys(Path queueDir, QueueDescriptor descriptor, KeyRingSource source, boolean readOnly) {
        this.queueDir = queueDir;
        this.descriptor = descriptor;
        this.identity = new QueueIdentity(descriptor.name(), descriptor.incarnationId());
        this.mode = descriptor.cipherMode();
        this.source = source;
        this.readOnly = readOnly;
    }

    /**
     * Opens (or, when {@code dir} has no descriptor and may be written, creates) the keys of an encrypted
     * queue. {@code existing} is the descriptor read from {@code dir} (null: none); {@code fresh} is the one to
     * create when there is none (a new queue, or a replica's copy of its leader's); {@code requestedMode} is
     * the mode the application asked for, explicitly or by default. {@code freshFromLeader}: {@code fresh} is a
     * leader's descriptor (a replica's), believed only if authentic and of the requested mode.
     */
    static QueueKeys open(Path dir, String label, QueueDescriptor existing, CipherMode requestedMode,
                          QueueDescriptor fresh, boolean freshFromLeader, KeyRing fixedRing, Path keyDirectory,
                          KeyRingSource.PermissionPolicy keyFilePolicy, boolean readOnly, Duration reloadInterval) {
        KeyRingSource source = keyDirectory == null ? null : new KeyRingSource(keyDirectory, keyFilePolicy);
        KeyRing ring = source == null ? fixedRing : load(source, label);
        try {
            return open(dir, label, existing, requestedMode, fresh, freshFromLeader, ring, source, readOnly, reloadInterval);
        } catch (RuntimeException e) {
            if (source != null) {
                wipe(ring);
            }
            throw e;
        }
    }

    private static QueueKeys open(Path dir, String label, QueueDescriptor existing, CipherMode requestedMode,
                                  QueueDescriptor fresh, boolean freshFromLeader, KeyRing ring, KeyRingSource source,
                                  boolean readOnly, Duration reloadInterval) {
        QueueDescriptor descriptor;
        if (existing != null) {
            descriptor = existing;
        } else if (readOnly) {
            throw new QueueConfigurationException(label, QueueConfigurationException.Problem.UNREADABLE_DESCRIPTOR,
                    "no queue in " + dir + " to open read-only");
        } else {
            // Created authenticated from the first byte: the active key's fingerprint and the authenticator.
            QueueKeys creator = new QueueKeys(dir, fresh, null, false);
            if (freshFromLeader && fresh.encrypted()) {
                // A leader's descriptor is a file like any other: believed only if authentic (a missing authenticator
                // is refused, never re-signed), and its mode only if the application asked for it in code.
                creator.verify(fresh, ring);
                checkMode(fresh, requestedMode, dir);
            }
            QueueDescriptor signed = creator.sign(creator.withActiveFingerprint(fresh, ring), ring);
            descriptor = signed.createIn(dir); // another process may have created one first: that one counts
        }
        if (!descriptor.encrypted()) {
            throw new QueueConfigurationException(descriptor.name(), QueueConfigurationException.Problem.PLAIN_QUEUE_OPENED_AS_ENCRYPTED,
                    "the queue in " + dir + " is plain; open it without encryption");
        }
        checkMode(descriptor, requestedMode, dir);
        QueueKeys keys = new QueueKeys(dir, descriptor, source, readOnly);
        keys.checkFingerprints(ring);
        keys.verify(descriptor, ring);
        keys.ring = ring;
        if (reloadInterval != null) {
            keys.startReloading(reloadInterval);
        }
        return keys;
    }

    private static void checkMode(QueueDescriptor descriptor, CipherMode requestedMode, Path dir) {
        if (descriptor.cipherMode() != requestedMode) {
            throw new QueueConfigurationException(descriptor.name(), QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH,
                    "asked for " + requestedMode + (requestedMode == EnterpriseQueue.DEFAULT_CIPHER_MODE ? " (the default)" : "")
                            + " but the queue's descriptor" + (dir == null ? "" : " for " + dir) + " says " + descriptor.cipherMode()
                            + "; a queue without authentication is only opened when the application asks for that mode in code");
        }
    }

    @Override
    public KeyRing get() {
        return ring;
    }

    QueueDescriptor descriptor() {
        return descriptor;
    }

    ExcerptSealer newSealer(CryptoEngine engine, WriterEpochs epochs) {
        // Before the first seal (which records the key) the sealer only derives keys from the current ring.
        return new ExcerptSealer(identity, () -> {
            KeyRing recorded = sealingRing;
            return recorded != null ? recorded : ring;
        }, mode, engine, epochs);
    }

    /**
     * Called by appenders before each seal (one volatile read in steady state): a key is recorded in the
     * descriptor when it first writes, never when a queue is merely opened, so readers change nothing.
     */
    void prepareToSeal() {
        if (ring != sealingRing) {
            recordActiveKey();
        }
    }

    private synchronized void recordActiveKey() {
        // Read under the lock: a ring read before it may have been replaced and wiped by a reload meanwhile.
        KeyRing candidate = ring;
        if (candidate == sealingRing) {
            return;
        }
        int active = candidate.activeKeyId();
        if (!descriptor.keyFingerprints().containsKey(active)) {
            if (readOnly) {
                throw new QueueConfigurationException(identity.name(), QueueConfigurationException.Problem.WRONG_KEY,
                        "key id " + active + " has not written to this queue and a read-only queue cannot record it");
            }
            descriptor = QueueDescriptor.update(queueDir, current -> {
                verify(current, candidate);
                Long known = current.keyFingerprints().get(active);
                if (known != null) {
                    if (known != fingerprint(candidate, active)) {
                        throw wrongKey(active); // another process recorded a different key under this id first
                    }
                    return current;
                }
                return sign(withActiveFingerprint(current, candidate), candidate);
            });
        }
        KeyRing replaced = sealingRing;
        sealingRing = candidate;
        retire(replaced);
    }

    ExcerptOpener newOpener(CryptoEngine engine) {
        return new ExcerptOpener(identity, this, mode, engine);
    }

    /** Loads a key directory; its {@code KeyFileException} reaches callers as the library's own type. */
    private static KeyRing load(KeyRingSource source, String label) {
        try {
            return source.load();
        } catch (io.queueenterprise.crypto.KeyFileException e) {
            throw keyFiles(label, e);
        }
    }

    private static QueueConfigurationException keyFiles(String label, io.queueenterprise.crypto.KeyFileException e) {
        return new QueueConfigurationException(label, QueueConfigurationException.Problem.KEY_FILES, e.getMessage(), e);
    }

    synchronized boolean reload() {
        if (source == null || closed) {
            return false;
        }
        KeyRing before = source.current();
        try {
            source.reloadIfChanged();
        } catch (io.queueenterprise.crypto.KeyFileException e) {
            throw keyFiles(identity.name(), e);
        }
        // Compare with what this queue installed, not with what the source read last: a ring refused
        // once stays refused (and reported) until the directory is fixed.
        KeyRing latest = source.current();
        if (latest != before) {
            retire(before); // a ring refused earlier, now replaced by the source
        }
        if (latest == ring) {
            return false;
        }
        checkFingerprints(latest);
        KeyRing replaced = ring;
        ring = latest; // its active key is recorded when it first writes (prepareToSeal)
        retire(replaced);
        return true;
    }

    /**
     * Wipes a ring this queue loaded from files once nothing can take it any more: it is neither installed, nor the
     * sealers' ring, nor the source's latest. Called under this object's lock, after the fields that replaced it were
     * written: a sealer or opener that took it just before derives from a wiped key, notices (the crypto module
     * checks after copying the material) and takes the ring again.
     */
    private void retire(KeyRing old) {
        if (source != null && old != null && old != ring && old != sealingRing && old != source.current()) {
            wipe(old);
        }
    }

    private static void wipe(KeyRing loaded) {
        if (loaded != null) {
            for (int id : loaded.keyIds()) {
                loaded.key(id).destroy();
            }
        }
    }

    /** Refuses a ring holding a key id the queue knows under another key. */
    private void checkFingerprints(KeyRing candidate) {
        for (Map.Entry<Integer, Long> recorded : descriptor.keyFingerprints().entrySet()) {
            int keyId = recorded.getKey();
            if (candidate.contains(keyId) && fingerprint(candidate, keyId) != recorded.getValue()) {
                throw wrongKey(keyId);
            }
        }
    }

    /**
     * For a writer that holds the keys but not the directory (a remote client): checks a descriptor received from a
     * node against {@code ring}: authentic, no key id recorded under another key, and the ring's active key already
     * recorded (a remote writer cannot record it: the node holds no key to re-authenticate the descriptor).
     */
    static QueueDescriptor verifyForRemoteWriter(String label, byte[] bytes, KeyRing ring, CipherMode requestedMode) {
        QueueDescriptor d = QueueDescriptor.parse(label, new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
        if (!d.encrypted()) {
            throw new QueueConfigurationException(d.name(), QueueConfigurationException.Problem.PLAIN_QUEUE_OPENED_AS_ENCRYPTED,
                    "the queue '" + d.name() + "' is plain; remote clients append only to encrypted queues");
        }
        if (d.cipherMode() != requestedMode) {
            throw new QueueConfigurationException(d.name(), QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH,
                    "asked for " + requestedMode + " but the queue's descriptor says " + d.cipherMode());
        }
        QueueKeys keys = new QueueKeys(null, d, null, true);
        keys.checkFingerprints(ring);
        keys.verify(d, ring);
        if (!d.keyFingerprints().containsKey(ring.activeKeyId())) {
            throw new QueueConfigurationException(d.name(), QueueConfigurationException.Problem.WRONG_KEY,
                    "the active key id " + ring.activeKeyId() + " has not been recorded in the queue's descriptor; a remote"
                            + " writer cannot record it (the node holds no key): write once with it locally, or use a recorded key");
        }
        return d;
    }

    /** Checks the descriptor's authenticator with the key it names. */
    private void verify(QueueDescriptor d, KeyRing candidate) {
        int keyId = d.macKeyId();
        if (keyId < 0) {
            throw notAuthentic(d, "it carries no authenticator (an encrypted queue's descriptor always does)");
        }
        if (!candidate.contains(keyId)) {
            throw notAuthentic(d, "it is authenticated under key id " + keyId + ", which the key ring "
                    + java.util.Arrays.toString(candidate.keyIds()) + " does not hold");
        }
        if (!MessageDigest.isEqual(tag(d, candidate.key(keyId), keyId), d.mac())) {
            throw notAuthentic(d, "its authenticator does not verify under key id " + keyId
                    + ": edited, or copied from another queue or incarnation");
        }
    }

    private QueueDescriptor sign(QueueDescriptor d, KeyRing candidate) {
        int keyId = candidate.activeKeyId();
        return d.withMac(keyId, tag(d, candidate.key(keyId), keyId));
    }

    private byte[] tag(QueueDescriptor d, MasterKey key, int keyId) {
        QueueKey derived = QueueKey.derive(key, new QueueIdentity(d.name(), d.incarnationId()), d.cipherMode());
        try {
            return derived.descriptorTag(d.authenticatedContent(keyId));
        } finally {
            derived.destroy();
        }
    }

    private QueueDescriptor withActiveFingerprint(QueueDescriptor d, KeyRing candidate) {
        int active = candidate.activeKeyId();
        return d.keyFingerprints().containsKey(active) ? d : d.withFingerprint(active, fingerprint(candidate, active));
    }

    /** The key check value of a key id for this queue; the derived key material is wiped at once. */
    private long fingerprint(KeyRing candidate, int keyId) {
        QueueKey derived = QueueKey.derive(candidate.key(keyId), identity, mode);
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

    private QueueConfigurationException notAuthentic(QueueDescriptor d, String why) {
        return new QueueConfigurationException(d.name(), QueueConfigurationException.Problem.DESCRIPTOR_NOT_AUTHENTIC,
                queueDir.resolve(QueueDescriptor.FILE_NAME) + " is refused: " + why);
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
                    LOG.info("queue '{}': key ring reloaded, active key id {}", identity.name(), ring.activeKeyId());
                }
            } catch (RuntimeException e) {
                // Keep serving with the current ring; the message names files and key ids, never key bytes.
                LOG.warn("queue '{}': key reload refused, keeping the current ring: {}", identity.name(), e.getMessage());
            }
        }, millis, millis, TimeUnit.MILLISECONDS);
    }

    /** Stops reloading; master keys this queue loaded from files are wiped (a ring the application passed is its own). */
    @Override
    public void close() {
        if (reloader != null) {
            reloader.shutdownNow();
        }
        if (source != null) {
            synchronized (this) {
                closed = true;
                KeyRing latest = source.current();
                wipe(latest);
                if (ring != latest) {
                    wipe(ring);
                }
                if (sealingRing != latest && sealingRing != ring) {
                    wipe(sealingRing);
                }
            }
        }
    }
}
