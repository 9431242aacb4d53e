package io.queueenterprise.crypto;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Reads a shared secret (the replicas' peer credential, the remote clients' credential) from a file holding the raw
 * bytes, or hex, or base64 (whitespace around is ignored), as a mounted Secret provides it. A file (or the folder it
 * lies in) that others can write is refused; other loose permissions are logged. Messages name the file, never its
 * content; the raw bytes read are wiped.
 */
public final class CredentialFile {
    private CredentialFile() {
    }

    /** The file could not be used; the message says why, in the words of the credential named by the caller. */
    public static final class UnusableCredentialException extends Exception {
        private UnusableCredentialException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** An unusable credential with {@code message} (for readers of other credential formats built on this one). */
    public static UnusableCredentialException unusable(String message) {
        return new UnusableCredentialException(message, null);
    }

    /**
     * The key material rules ({@link KeyMaterialPermissions}, docs/crypto.md): a credential file, or the folder it
     * really lies in, writable by others is refused (whoever can replace the credential can pose as a peer or a
     * client); access for group or others otherwise is logged as a warning, the kubelet's fsGroup projection in a
     * Secret volume ({@code 0440}, the process's own group) excepted.
     */
    private static void checkPermissions(Path file, String what) throws UnusableCredentialException {
        if (!Files.exists(file)) {
            return; // reading reports it
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            boolean secretVolume = parent != null && Files.isSymbolicLink(parent.resolve(KeyRingSource.SECRET_DATA_LINK));
            KeyMaterialPermissions.checkSecretFile(file, what + " file", KeyRingSource.PermissionPolicy.WARN, secretVolume);
            Path real = KeyMaterialPermissions.realParent(file);
            if (real != null) {
                KeyMaterialPermissions.checkFolder(real, KeyRingSource.PermissionPolicy.WARN, false);
            }
        } catch (KeyFileException e) {
            throw new UnusableCredentialException(what + " file " + file + " is refused: " + e.getMessage(), null);
        }
    }

    /**
     * @param what      what the file holds, for messages ("peer credential", "client credential")
     * @param minLength the fewest random bytes accepted
     * @return the secret, a fresh array the caller owns
     */
    public static byte[] read(Path file, String what, int minLength) throws UnusableCredentialException {
        checkPermissions(file, what);
        byte[] raw;
        try {
            raw = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UnusableCredentialException(what + " file " + file + " cannot be read: " + e.getMessage(), e);
        }
        try {
            String text = new String(raw, StandardCharsets.US_ASCII).strip();
            byte[] decoded = null;
            if (text.matches("[0-9a-fA-F]+") && text.length() % 2 == 0 && text.length() >= 2 * minLength) {
                decoded = HexFormat.of().parseHex(text);
            } else if (text.matches("[A-Za-z0-9+/=]+") && text.length() >= 43) {
                try {
                    decoded = Base64.getDecoder().decode(text);
                } catch (IllegalArgumentException notBase64) {
                    decoded = null;
                }
            }
            byte[] secret = decoded != null && decoded.length >= minLength ? decoded : raw;
            if (secret.length < minLength) {
                throw new UnusableCredentialException(what + " file " + file + " holds " + secret.length
                        + " bytes; at least " + minLength + " random bytes are needed (raw, hex or base64)", null);
            }
            return secret.clone();
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }
}
