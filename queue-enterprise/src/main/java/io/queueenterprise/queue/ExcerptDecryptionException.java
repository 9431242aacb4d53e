package io.queueenterprise.queue;

import io.queueenterprise.crypto.EnvelopeException;

/**
 * An excerpt of an encrypted queue could not be opened: wrong key, unknown key id, truncated or
 * tampered envelope. No bytes of it are returned as plaintext, and the tailer does not move past it
 * ({@link QueueTailer#skip()} does that explicitly).
 */
public final class ExcerptDecryptionException extends ExcerptException {
    private static final long serialVersionUID = 1L;
    private final EnvelopeException.Reason reason;

    public ExcerptDecryptionException(String queueName, long index, EnvelopeException cause) {
        super(queueName, index, "cannot open the excerpt: " + cause.description(), cause);
        this.reason = cause.reason();
    }

    public EnvelopeException.Reason reason() {
        return reason;
    }
}
