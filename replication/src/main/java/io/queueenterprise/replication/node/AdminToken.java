package io.queueenterprise.replication.node;

import io.queueenterprise.replication.ReplicationException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The admin endpoint's bearer token, from {@code admin.credentialFile}. Presented tokens are compared in constant
 * time: both sides are hashed first (SHA-256), so neither the content nor the length of the token leaks through
 * timing. The file is read again when its modification time changes, so a rotated Kubernetes Secret takes effect
 * without a restart; a file that became unreadable keeps the last good token.
 */
final class AdminToken {
    static final int MIN_LENGTH = 16;
    private static final String BEARER = "Bearer ";

    private final Path file;
    private FileTime loadedModified;
    private byte[] expectedDigest;

    AdminToken(Path file) {
        this.file = file;
        reloadIfChanged(true);
    }

    /** Whether an {@code Authorization} header value carries the token. */
    synchronized boolean accepts(String authorization) {
        reloadIfChanged(false);
        if (authorization == null || authorization.length() < BEARER.length()
                || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return false;
        }
        byte[] presented = sha256(authorization.substring(BEARER.length()).strip().getBytes(StandardCharsets.UTF_8));
        return MessageDigest.isEqual(presented, expectedDigest);
    }

    private void reloadIfChanged(boolean first) {
        try {
            FileTime modified = Files.getLastModifiedTime(file);
            if (!first && modified.equals(loadedModified)) {
                return;
            }
            String token = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (token.length() < MIN_LENGTH) {
                throw new ReplicationException("admin.credentialFile " + file + " holds a token of " + token.length()
                        + " characters; at least " + MIN_LENGTH + " are needed");
            }
            expectedDigest = sha256(token.getBytes(StandardCharsets.UTF_8));
            loadedModified = modified;
        } catch (IOException | ReplicationException e) {
            if (first) {
                throw e instanceof ReplicationException r ? r
                        : new ReplicationException("admin.credentialFile " + file + " cannot be read: "
                        + (e instanceof NoSuchFileException ? "no such file"
                        : e instanceof AccessDeniedException ? "permission denied" : e.getMessage()), e);
            }
            // A Secret being swapped (symlink flip) may be briefly unreadable: keep the last good token.
        }
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
