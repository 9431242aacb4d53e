package io.queueenterprise.bench.subject;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.RollCycles;

import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The library ({@link EnterpriseQueue}): plain, or encrypted in one crypto mode with a key ring of
 * one random 32-byte master key generated for the run (never from the command line).
 * {@code appender.write(BytesStore)} and {@code tailer.read(Bytes)}, as an application does.
 */
public final class LibrarySubject implements Subject {

    /** One factory per variant: {@code mode == null} is plain. */
    public static final class Factory implements SubjectFactory {
        private final String name;
        private final CipherMode mode;

        public Factory(String name, CipherMode mode) {
            this.name = name;
            this.mode = mode;
        }

        @Override public String name() { return name; }
        @Override public String description() {
            return mode == null ? "queue-enterprise library, plain"
                    : "queue-enterprise library, encrypted " + mode + " (default engine), random 32-byte master key";
        }
        @Override public Role role() { return mode == null ? Role.PLAIN : Role.ENCRYPTED; }
        @Override public boolean persists() { return true; }
        @Override public Subject open(SubjectConfig config) {
            return new LibrarySubject(config, mode);
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    private final SubjectConfig config;
    private final EnterpriseQueue queue;

    LibrarySubject(SubjectConfig config, CipherMode mode) {
        this.config = config;
        EnterpriseQueue.Builder b = EnterpriseQueue.builder(config.queueDir()).rollCycle(RollCycles.FAST_DAILY);
        if (mode == null) {
            b.plain();
        } else {
            b.encrypted(keyDirectory(config.secretsDir())).cipherMode(mode);
        }
        queue = b.build();
    }

    /**
     * The run's key directory (KeyRingSource layout): one random 32-byte master key, written
     * owner-only by whichever process opens the run first and read by the other (a consumer
     * process); keys never travel on a command line.
     */
    private static synchronized java.nio.file.Path keyDirectory(java.nio.file.Path dir) {
        java.nio.file.Path keyFile = dir.resolve("1.key");
        if (java.nio.file.Files.exists(keyFile)) {
            return dir;
        }
        byte[] material = new byte[32];
        RANDOM.nextBytes(material);
        try {
            java.nio.file.Files.createDirectories(dir);
            java.nio.file.Path tmp = dir.resolve(".1.key.tmp");
            // the key file format (docs/crypto.md): hex and a line end
            java.nio.file.Files.writeString(tmp, java.util.HexFormat.of().formatHex(material) + "\n");
            try {
                java.nio.file.Files.setPosixFilePermissions(tmp,
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException ignored) {
                // not POSIX: nothing more to restrict
            }
            java.nio.file.Files.writeString(dir.resolve("active"), "1\n");
            java.nio.file.Files.move(tmp, keyFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            Arrays.fill(material, (byte) 0);
        }
        return dir;
    }

    // producer() and consumer() mirror ChronicleRawSubject line by line on purpose: the two subjects
    // differ only in the API under measurement (the library's vs raw Chronicle's).
    @Override
    public Producer producer() {
        return producerOf(queue, config);
    }

    /** A producer appending with the library to {@code queue}: also the replicated subjects' producer. */
    static Producer producerOf(EnterpriseQueue queue, SubjectConfig config) {
        QueueAppender appender = queue.createAppender();
        Bytes<?> message = Bytes.allocateDirect(config.messageSize());
        message.zeroOut(0, config.messageSize());
        message.writeSkip(config.messageSize());
        return new Producer() {
            @Override public void send(long intendedNanos) {
                message.writeLong(0, intendedNanos);
                appender.write(message);
            }

            @Override public void close() {
                appender.close();
                message.releaseLast();
            }
        };
    }

    @Override
    public Consumer consumer() {
        return consumerOf(queue, config);
    }

    /** A consumer reading with the library from {@code queue}: also the replicated subjects' consumer. */
    static Consumer consumerOf(EnterpriseQueue queue, SubjectConfig config) {
        return consumerOf(queue.createTailer(), config);
    }

    /** A consumer reading with {@code tailer} (a library tailer, or a remote one): closes it when closed. */
    static Consumer consumerOf(QueueTailer tailer, SubjectConfig config) {
        Bytes<?> in = Bytes.allocateElasticDirect(Math.max(64, config.messageSize() * 2L));
        return new Consumer() {
            @Override public long poll() {
                in.clear();
                return tailer.read(in) ? in.readLong(0) : NONE;
            }

            @Override public void close() {
                tailer.close();
                in.releaseLast();
            }
        };
    }

    @Override
    public void close() {
        queue.close();
    }
}
