package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.CredentialFile;
import io.queueenterprise.replication.ReplicationException;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * The per-cluster peer credential: 32 or more random bytes, one Secret shared by the replicas of a cluster and by
 * nothing else (NOT a data key: a node that holds it can replicate sealed excerpts but open none). The file holds
 * the raw bytes, or hex, or base64 (whitespace around is ignored).
 */
public final class PeerCredential implements AutoCloseable {
    public static final int MIN_LENGTH = 32;
    private final byte[] secret;

    private PeerCredential(byte[] secret) {
        this.secret = secret;
    }

    public static PeerCredential of(byte[] secret) {
        if (secret.length < MIN_LENGTH) {
            throw new ReplicationException("peer credential has " + secret.length + " bytes; at least " + MIN_LENGTH + " random bytes are needed");
        }
        return new PeerCredential(secret.clone());
    }

    /** Reads the credential file; the message names the file, never its content. */
    public static PeerCredential load(Path file) {
        try {
            return new PeerCredential(CredentialFile.read(file, "peer credential", MIN_LENGTH));
        } catch (CredentialFile.UnusableCredentialException e) {
            throw new ReplicationException(e.getMessage(), e.getCause());
        }
    }

    byte[] secret() {
        return secret;
    }

    @Override
    public void close() {
        Arrays.fill(secret, (byte) 0);
    }

    @Override
    public String toString() {
        return "PeerCredential[" + secret.length + " bytes]";
    }
}
