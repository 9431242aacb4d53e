/**
 * The Java client library applications embed: a persisted, memory-mapped queue on open-source
 * Chronicle Queue, with optional salted AES-128 encryption of every excerpt before it reaches the
 * mapped file.
 *
 * <p>Entry point: {@link io.queueenterprise.queue.EnterpriseQueue#builder(java.nio.file.Path)}.
 *
 * <p>Thread-safety: an {@link io.queueenterprise.queue.EnterpriseQueue} is thread-safe; each
 * {@link io.queueenterprise.queue.QueueAppender} and {@link io.queueenterprise.queue.QueueTailer}
 * belongs to one thread at a time (create one per thread; many appenders in many threads and
 * processes may write to the same queue, Chronicle's write lock orders them).
 */
package io.queueenterprise.queue;
