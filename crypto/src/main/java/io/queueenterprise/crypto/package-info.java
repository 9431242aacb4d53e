/**
 * Excerpt encryption: the versioned envelope format, salted AES-128 seal/open, key ring and key loading.
 * Depends on the JDK and Bouncy Castle only (never on Chronicle); works on {@code byte[]}.
 *
 * <p>Hot path (one instance per thread, zero allocation in steady state):
 * {@link io.queueenterprise.crypto.ExcerptSealer#sealInPlace} and
 * {@link io.queueenterprise.crypto.ExcerptOpener#openInPlace}. Keys: {@link io.queueenterprise.crypto.MasterKey},
 * {@link io.queueenterprise.crypto.KeyRing}, {@link io.queueenterprise.crypto.KeyRingSource} (a key directory laid
 * out like a mounted Kubernetes Secret), {@link io.queueenterprise.crypto.QueueKey} (HKDF per queue incarnation).
 * Design, nonce-uniqueness argument and measurements: {@code docs/crypto.md}.
 */
package io.queueenterprise.crypto;
