/**
 * Excerpt encryption: the versioned envelope format, salted AES-128 seal/open, key ring and key loading.
 * Depends on the JDK and Bouncy Castle only.
 */
package io.queueenterprise.crypto;
