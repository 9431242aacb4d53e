package io.queueenterprise.replication.config;

import io.queueenterprise.crypto.IdentityKey;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * Identities for replicas started by a tool on one machine (benchmarks, demos): a fresh identity key per peer, written
 * owner-only to {@code <directory>/<id>.identity.key}, and the peers named with their public keys. A cluster an
 * operator runs gets them from the operator or from {@code qe identity}.
 */
public final class LocalIdentities {
    private LocalIdentities() {
    }

    /** The peers, each with a fresh identity whose key file {@link #keyFile} now holds. */
    public static List<NodeConfig.Peer> assign(List<NodeConfig.Peer> peers, Path directory) {
        SecureRandom random = new SecureRandom();
        List<NodeConfig.Peer> named = new ArrayList<>();
        try {
            Files.createDirectories(directory);
            for (NodeConfig.Peer p : peers) {
                try (IdentityKey identity = IdentityKey.generate(random)) {
                    Path file = keyFile(directory, p.id());
                    Files.write(file, identity.seedHex().getBytes(StandardCharsets.US_ASCII));
                    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
                    named.add(p.withIdentityKey(identity.publicKeyText()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write identity keys under " + directory, e);
        }
        return named;
    }

    public static Path keyFile(Path directory, String nodeId) {
        return directory.resolve(nodeId + ".identity.key");
    }
}
