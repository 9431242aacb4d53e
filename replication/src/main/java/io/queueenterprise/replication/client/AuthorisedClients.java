package io.queueenterprise.replication.client;

import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.config.NodeConfigReader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The remote clients a node takes (docs/remote-clients.md, "Per-client identity"): names and the public keys of their
 * identities, one per line as {@code <name> <public key>} ({@code qe identity} prints exactly that), {@code #}
 * comments and blank lines ignored. Public keys only: the file can be a ConfigMap. A client proves its name by
 * signing its PROOF with the key named here; one missing from the set is refused {@code UNKNOWN_CLIENT}. Immutable:
 * a reload makes a new set ({@link ClientGateway#authorise}).
 */
public final class AuthorisedClients {
    private final Map<String, byte[]> keys;

    private AuthorisedClients(Map<String, byte[]> keys) {
        this.keys = Collections.unmodifiableMap(keys);
    }

    public static AuthorisedClients of(Map<String, byte[]> keys) {
        Map<String, byte[]> copy = new LinkedHashMap<>();
        keys.forEach((name, key) -> copy.put(name, key.clone()));
        return new AuthorisedClients(copy);
    }

    /** Reads and checks the whole file; any bad line refuses it all, naming the line (never a key). */
    public static AuthorisedClients read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new ReplicationException("authorised clients file " + file + " cannot be read: " + e.getMessage(), e);
        }
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] parts = line.split("\\s+");
            String where = "authorised clients file " + file + " line " + (i + 1);
            if (parts.length != 2) {
                throw new ReplicationException(where + ": not '<name> <public key>'");
            }
            if (!NodeConfigReader.isSafeName(parts[0])) {
                throw new ReplicationException(where + ": '" + parts[0] + "' is not a client name: " + NodeConfigReader.SAFE_NAME_RULE);
            }
            byte[] key;
            try {
                key = IdentityKey.parsePublicKey(parts[1]);
            } catch (IllegalArgumentException e) {
                throw new ReplicationException(where + ": the public key " + e.getMessage());
            }
            if (keys.put(parts[0], key) != null) {
                throw new ReplicationException(where + ": client '" + parts[0] + "' is named twice");
            }
        }
        return new AuthorisedClients(keys);
    }

    /** The public key of the client {@code name}; null when the set does not hold it. */
    public byte[] key(String name) {
        return keys.get(name);
    }

    /** Whether {@code name} is still authorised with the same key (a session of a revoked or re-keyed client ends). */
    boolean holds(String name, byte[] key) {
        byte[] k = keys.get(name);
        return k != null && Arrays.equals(k, key);
    }

    public int size() {
        return keys.size();
    }

    @Override
    public String toString() {
        return "AuthorisedClients" + keys.keySet();
    }
}
