package io.queueenterprise.operator.api;

/** The cipher mode a queue's descriptor says; the node-configuration document's {@code encryption}. */
public enum Encryption {
    NONE,
    /** Confidentiality only: readers cannot detect tampering. */
    AES_128_CTR,
    /** Authenticated (the default a client library chooses). */
    AES_128_CTR_POLY1305
}
