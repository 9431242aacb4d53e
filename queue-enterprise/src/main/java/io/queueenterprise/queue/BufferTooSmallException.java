package io.queueenterprise.queue;

/** The caller's buffer cannot hold the next excerpt; the tailer did not move, so read again. */
public final class BufferTooSmallException extends ExcerptException {
    private static final long serialVersionUID = 1L;
    private final int required;

    public BufferTooSmallException(String queueName, long index, int required, int available) {
        super(queueName, index, "excerpt needs " + required + " bytes, the buffer has " + available, null);
        this.required = required;
    }

    public int required() {
        return required;
    }
}
