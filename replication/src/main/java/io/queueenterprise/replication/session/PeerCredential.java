package io.queueenterprise.replication.session;

import io.queueenterprise.replication.ReplicationException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

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
        byte[] raw;
        try {
            raw = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ReplicationException("peer credential file " + file + " cannot be read: " + e.getMessage(), e);
        }
        try {
            String text = new String(raw, java.nio.charset.StandardCharsets.US_ASCII).strip();
            byte[] decoded = null;
            if (text.matches("[0-9a-fA-F]+") && text.length() % 2 == 0 && text.length() >= 2 * MIN_LENGTH) {
                decoded = HexFormat.of().parseHex(text);
            } else if (text.matches("[A-Za-z0-9+/=]+") && text.length() >= 43) {
                try {
                    decoded = Base64.getDecoder().decode(text);
                } catch (IllegalArgumentException notBase64) {
                    decoded = null;
                }
            }
            byte[] secret = decoded != null && decoded.length >= MIN_LENGTH ? decoded : raw;
            if (secret.length < MIN_LENGTH) {
                throw new ReplicationException("peer credential file " + file + " holds " + secret.length
                        + " bytes; at least " + MIN_LENGTH + " random bytes are needed (raw, hex or base64)");
            }
            return new PeerCredential(secret.clone());
        } finally {
            Arrays.fill(raw, (byte) 0);
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
