package io.queueenterprise.crypto;

/**
 * The raw AES-128 forward block function under one fixed key: encrypts {@code blocks} consecutive 16-byte
 * blocks. Built once per key, never re-initialised; single-threaded; allocation-free per call.
 * {@code in} and {@code out} must be different arrays.
 */
public interface AesBlockFunction {
    int BLOCK_SIZE = 16;

    void encryptBlocks(byte[] in, int inOff, byte[] out, int outOff, int blocks);

    /** Which engine this is. */
    CryptoEngine engine();
}
