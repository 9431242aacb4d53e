package io.queueenterprise.crypto;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The write-authorisation key of a queue under one master key: HKDF-SHA256 (RFC 5869) of the master key with its own
 * label, info = "queue-enterprise/v2/write-auth/" + queue name, no salt (a node is given it before the queue, and its
 * incarnation, exists). A remote client derives it from the master key it holds and tags each envelope it sends; a
 * node holds only this derived key (a file in its config, like the client credential) and checks the tag, so it takes
 * envelopes only from clients that hold the queue's master key. The derivation is one way: the write key gives no
 * information about the master key or the data keys derived from it (different HKDF info, and salt), so a node that
 * holds it can neither decrypt nor forge an envelope that a reader accepts. The key version is the master key's id,
 * which every envelope names. docs/crypto.md, "Write authorisation".
 */
public final class WriteKeys {
    public static final String PURPOSE = "write-auth";
    public static final int LENGTH = 32;

    private WriteKeys() {
    }

    /** The write key of {@code queueName} under {@code master} (a fresh array the caller wipes). */
    public static byte[] derive(MasterKey master, String queueName) {
        byte[] ikm = master.materialCopy(); // never a half-wiped key (see MasterKey.materialCopy)
        try {
            byte[] info = (QueueKey.INFO_PREFIX + PURPOSE + "/" + queueName).getBytes(StandardCharsets.UTF_8);
            return QueueKey.hkdf(ikm, null, info, LENGTH);
        } finally {
            Arrays.fill(ikm, (byte) 0);
        }
    }
}
