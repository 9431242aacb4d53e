package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.CredentialFile;
import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.replication.ReplicationException;

import java.nio.file.Path;
import java.util.Arrays;
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
 */
public final class PeerIdentities implements AutoCloseable {
    private final IdentityKey own;
    private final byte[][] publicKeys;

    private PeerIdentities(IdentityKey own, byte[][] publicKeys) {
        this.own = own;
        this.publicKeys = publicKeys;
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
        return new PeerIdentities(own, keys);
    }

    /**
     * Loads this node's identity key file and checks it against the configured public keys; without a file (null), a
     * key drawn for this run signs this node's handshakes (no peer can pin it: the configuration pins none).
     */
    public static PeerIdentities load(Path identityKeyFile, List<byte[]> publicKeys, int self) {
        IdentityKey own;
        if (identityKeyFile == null) {
            if (publicKeys.get(self) != null) {
                throw new ReplicationException("identityKeyFile: missing, but this node's peers entry pins an identity key");
            }
            return of(IdentityKey.generate(new java.security.SecureRandom()), publicKeys, self);
        }
        try {
            own = IdentityKey.load(identityKeyFile, "node identity key");
        } catch (CredentialFile.UnusableCredentialException e) {
            throw new ReplicationException(e.getMessage(), e.getCause());
        }
        return of(own, publicKeys, self);
    }

    /** Whether the configuration pins the identity of the replica at {@code position}. */
    public boolean pinned(int position) {
        return publicKeys[position] != null;
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
        if (position < 0 || position >= publicKeys.length) {
            return false;
        }
        return publicKeys[position] == null || IdentityKey.verify(publicKeys[position], message, signature);
    }

    /** The short name of a replica's identity for logs and status: the first 8 hex digits of its public key, or "unpinned". */
    public String fingerprint(int position) {
        return publicKeys[position] == null ? "unpinned" : IdentityKey.fingerprint(publicKeys[position]);
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
