package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.IdentityKey;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The peer-identities file: pins of peers' identity public keys, one {@code <peerId> <public key>} per line (base64 or
 * hex of 32 bytes), blank lines and {@code #} comments allowed; what the operator renders into a ConfigMap from the
 * public keys the nodes report. A line that cannot be read (not two fields, not a public key, an id named twice)
 * refuses the whole file ({@link MalformedException}, naming the line): never half a set. A readable line that cannot
 * apply (an unknown peer, a conflict with the document's pin, this node under another key than its own) is left out
 * and said in {@link Pins#ignored()}.
 */
public final class PeerIdentitiesFile {
    private PeerIdentitiesFile() {
    }

    /**
     * @param pins    by position, the key to pin (null: none from the file)
     * @param ignored one sentence per line left out, naming the line
     */
    public record Pins(byte[][] pins, List<String> ignored) {
        /** No pins at all (no file yet). */
        public static Pins none(int peers) {
            return new Pins(new byte[peers][], List.of());
        }
    }

    /** A file refused whole: {@code line} (1-based) and what was wrong with it. */
    public static final class MalformedException extends Exception {
        private final int line;

        MalformedException(int line, String problem) {
            super("line " + line + ": " + problem);
            this.line = line;
        }

        public int line() {
            return line;
        }
    }

    /**
     * @param text       the file's content
     * @param peerIds    every replica's id, by position
     * @param identities the pins of the document and this node's own key
     * @param self       this node's position
     */
    public static Pins parse(String text, List<String> peerIds, PeerIdentities identities, int self) throws MalformedException {
        byte[][] pins = new byte[peerIds.size()][];
        List<String> seen = new ArrayList<>();
        List<String> ignored = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n].strip();
            int number = n + 1;
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\\s+");
            if (fields.length != 2) {
                throw new MalformedException(number, "not '<peerId> <public key>' (" + fields.length + " fields)");
            }
            String id = fields[0];
            if (seen.contains(id)) {
                throw new MalformedException(number, "peer '" + id + "' is pinned twice");
            }
            seen.add(id);
            byte[] key;
            try {
                key = IdentityKey.parsePublicKey(fields[1]);
            } catch (IllegalArgumentException e) {
                throw new MalformedException(number, "the key of '" + id + "' " + e.getMessage());
            }
            int position = peerIds.indexOf(id);
            if (position < 0) {
                ignored.add("line " + number + ": '" + id + "' is not among the peers " + peerIds + "; ignored");
            } else if (position == self) {
                if (!Arrays.equals(key, identities.ownPublicKeyBytes())) {
                    ignored.add("line " + number + ": pins this node (" + id + ") to " + IdentityKey.fingerprint(key)
                            + "..., but its own key is " + IdentityKey.fingerprint(identities.ownPublicKeyBytes()) + "...; ignored");
                }
            } else if (identities.documentPinned(position)) {
                if (!Arrays.equals(key, identities.pinnedKey(position))) {
                    ignored.add("line " + number + ": pins '" + id + "' to " + IdentityKey.fingerprint(key) + "..., but the"
                            + " node document pins " + identities.fingerprint(position) + "...; the document's pin stays");
                }
            } else {
                pins[position] = key;
            }
        }
        return new Pins(pins, List.copyOf(ignored));
    }
}
