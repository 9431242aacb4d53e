package io.queueenterprise.cli;

import java.nio.charset.StandardCharsets;

/**
 * The demo's 40-byte messages, e.g. {@code order=0000000042 EURUSD 1.08430 qty=1000}. The first 16
 * bytes, {@code order=} and ten digits, differ for every message: the distinctive part the
 * plaintext search looks for besides the whole message.
 */
final class DemoMessages {
    static final int SIZE = 40;
    static final byte[] ANCHOR = "order=".getBytes(StandardCharsets.US_ASCII);
    static final int DIGITS = 10;
    /** The distinctive part: {@code order=} and the zero-padded sequence number. */
    static final int DISTINCTIVE_LENGTH = 6 + DIGITS;
    private static final byte[] TAIL = " EURUSD 1.08430 qty=1000".getBytes(StandardCharsets.US_ASCII);

    private DemoMessages() {
    }

    /** Writes message {@code sequence} into {@code message} (no allocation: the demo measures this loop). */
    static void fill(byte[] message, int sequence) {
        System.arraycopy(ANCHOR, 0, message, 0, ANCHOR.length);
        int value = sequence;
        for (int i = DISTINCTIVE_LENGTH - 1; i >= ANCHOR.length; i--) {
            message[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        System.arraycopy(TAIL, 0, message, DISTINCTIVE_LENGTH, TAIL.length);
    }
}
