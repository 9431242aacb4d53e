package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.CredentialFile;
import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.replication.ReplicationException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;

/**
 * Who is who among the replicas: this node's own identity key (Ed25519, a file of its own that no other node holds)
 * and every replica's public key, by position in the cluster's peer list, from the node configuration. A handshake
 * frame that claims position {@code p} must be signed by {@code p}'s key ({@link SessionCrypto}); the session keys
 * that follow are known to the two ends alone, so a session is bound to the identity that opened it.
 *
 * <p>A peer whose public key the configuration does not pin ({@code peers[].identityKey} absent: a cluster set up
 * before identities, or by an operator that does not yet render them) is authenticated by the peer credential alone,
 * as before frame version 3: any holder of the credential can speak as it. Said at start, and in the node status.
 * Such a peer may be pinned later from the peer-identities file ({@link #applyFilePins}, another thread): the pins in
 * force are one immutable array behind a volatile reference, replaced whole, and {@link #generation()} tells the duty
 * cycle to check its live sessions against them.
 */
public final class PeerIdentities implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PeerIdentities.class);
    private final IdentityKey own;
    /** Read from or drawn into the identity key file (false: drawn for this run only). */
    private final boolean persistent;
    /** The document's pins, by position; never changed. */
    private final byte[][] documentKeys;
    /** The pins in force: the document's, and the file's for peers the document leaves unpinned. Replaced whole. */
    private volatile byte[][] publicKeys;
    /** Bumped whenever {@link #publicKeys} is replaced with different pins. */
    private volatile int generation;

    private PeerIdentities(IdentityKey own, byte[][] publicKeys, boolean persistent) {
        this.own = own;
        this.documentKeys = publicKeys;
        this.publicKeys = publicKeys;
        this.persistent = persistent;
    }

    /**
     * @param own        this node's identity key (owned from here: closed with this)
     * @param publicKeys every replica's public key by position (this node's own included, which must match {@code own})
     * @param self       this node's position
     */
    public static PeerIdentities of(IdentityKey own, List<byte[]> publicKeys, int self) {
        byte[][] keys = new byte[publicKeys.size()][];
        for (int i = 0; i < keys.length; i++) {
            byte[] k = publicKeys.get(i);
            if (k != null && k.length != IdentityKey.PUBLIC_KEY_LENGTH) {
                own.close();
                throw new ReplicationException("peers[" + i + "] has no identity public key of " + IdentityKey.PUBLIC_KEY_LENGTH + " bytes");
            }
            keys[i] = k == null ? null : k.clone();
        }
        if (keys[self] != null && !Arrays.equals(keys[self], own.publicKey())) {
            String configured = IdentityKey.fingerprint(keys[self]);
            String held = IdentityKey.fingerprint(own.publicKey());
            own.close();
            throw new ReplicationException("this node's identity key (public key " + held + "...) is not the one its peers"
                    + " entry names (" + configured + "...): the identity key file and the configuration disagree");
        }
        return new PeerIdentities(own, keys, false);
    }

    /**
     * Loads this node's identity key file and checks it against the configured public keys; without a file (null), a
     * key drawn for this run signs this node's handshakes (no peer can pin it: the configuration pins none).
     */
    public static PeerIdentities load(Path identityKeyFile, List<byte[]> publicKeys, int self) {
        return load(identityKeyFile, false, publicKeys, self, "node");
    }

    /**
     * As {@link #load(Path, List, int)}; with {@code drawIfAbsent} and the file absent, a fresh key is drawn into it
     * first (created new, owner-only from its creation: never a later chmod), in the format {@code qe identity}
     * writes (the seed in hex), and said once by its fingerprint.
     */
    public static PeerIdentities load(Path identityKeyFile, boolean drawIfAbsent, List<byte[]> publicKeys, int self, String nodeId) {
        IdentityKey own;
        if (identityKeyFile == null) {
            if (publicKeys.get(self) != null) {
                throw new ReplicationException("identityKeyFile: missing, but this node's peers entry pins an identity key");
            }
            return of(IdentityKey.generate(new SecureRandom()), publicKeys, self);
        }
        if (drawIfAbsent && !Files.exists(identityKeyFile, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            draw(identityKeyFile, nodeId);
        }
        try {
            own = IdentityKey.load(identityKeyFile, "node identity key");
        } catch (CredentialFile.UnusableCredentialException e) {
            throw new ReplicationException(e.getMessage(), e.getCause());
        }
        PeerIdentities drawn = of(own, publicKeys, self);
        return new PeerIdentities(drawn.own, drawn.documentKeys, true);
    }

    /** Draws an identity key into {@code file}: created new (another process that drew first wins), owner-only, synced. */
    private static void draw(Path file, String nodeId) {
        try (IdentityKey identity = IdentityKey.generate(new SecureRandom())) {
            byte[] content = identity.seedHex().getBytes(StandardCharsets.US_ASCII);
            try (SeekableByteChannel channel = Files.newByteChannel(file, EnumSet.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                ByteBuffer buffer = ByteBuffer.wrap(content);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                ((java.nio.channels.FileChannel) channel).force(true); // a crash must not leave an empty key behind
            } finally {
                Arrays.fill(content, (byte) 0);
            }
            LOG.info(nodeId + ": drew a new identity key into " + file + " (fingerprint "
                    + IdentityKey.fingerprint(identity.publicKey()) + "); the admin status reports its public key");
        } catch (FileAlreadyExistsException raced) {
            // another process drew it meanwhile: read as any present file
        } catch (IOException | UnsupportedOperationException e) {
            throw new ReplicationException("identityKeyFile " + file + " is absent and cannot be drawn into: " + e, e);
        }
    }

    /** Whether the configuration pins the identity of the replica at {@code position}. */
    public boolean pinned(int position) {
        return publicKeys[position] != null;
    }

    /** Whether the node document itself pins the replica at {@code position} (a file pin never overrides it). */
    public boolean documentPinned(int position) {
        return documentKeys[position] != null;
    }

    /** The key pinned now for {@code position} (not a copy: never modify), or null when unpinned. */
    public byte[] pinnedKey(int position) {
        return publicKeys[position];
    }

    /** Replicas in the configuration, this node included. */
    public int size() {
        return documentKeys.length;
    }

    /** Changes whenever the pins in force change; the duty cycle compares it once per cycle (a volatile read). */
    public int generation() {
        return generation;
    }

    /**
     * Pins from the peer-identities file, by position (null: no pin there); applied to positions the document leaves
     * unpinned only (the caller has dropped conflicting lines). The whole set replaces the previous file pins at once.
     *
     * @return whether the pins in force changed
     */
    public synchronized boolean applyFilePins(byte[][] filePins) {
        byte[][] next = new byte[documentKeys.length][];
        for (int i = 0; i < next.length; i++) {
            next[i] = documentKeys[i] != null ? documentKeys[i] : filePins[i] == null ? null : filePins[i].clone();
        }
        if (Arrays.deepEquals(next, publicKeys)) {
            return false;
        }
        publicKeys = next;
        generation++;
        return true;
    }

    /** Whether this node's identity key came from (or was drawn into) its identity key file; false: drawn for this run. */
    public boolean persistent() {
        return persistent;
    }

    /** This node's own public key (32 bytes, a copy). */
    public byte[] ownPublicKeyBytes() {
        return own.publicKey();
    }

    /** This node's signature of {@code message}. */
    public byte[] sign(byte[] message) {
        return own.sign(message);
    }

    /**
     * Whether {@code signature} is the signature of {@code message} by the replica at {@code position}; true for a
     * replica whose identity is not pinned (authenticated by the peer credential alone, see above).
     */
    public boolean verify(int position, byte[] message, byte[] signature) {
        byte[][] keys = publicKeys; // one read: a reload meanwhile does not mix two sets
        if (position < 0 || position >= keys.length) {
            return false;
        }
        return keys[position] == null || IdentityKey.verify(keys[position], message, signature);
    }

    /** The short name of a replica's identity for logs and status: the first 8 hex digits of its public key, or "unpinned". */
    public String fingerprint(int position) {
        byte[] key = publicKeys[position];
        return key == null ? "unpinned" : IdentityKey.fingerprint(key);
    }

    /** This node's own public key (base64), as its peers entry pins it; for the node status. */
    public String ownPublicKey() {
        return own.publicKeyText();
    }

    @Override
    public void close() {
        own.close();
    }
}
