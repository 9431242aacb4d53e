package io.queueenterprise.bench.subject;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

/**
 * The baseline: raw open-source Chronicle Queue doing the same operations the library does
 * ({@code appender.writeBytes(bytes)}, {@code tailer.readBytes(bytes)}), no encryption.
 */
public final class ChronicleRawSubject implements Subject {

    /** Registered as {@code chronicle-raw}. */
    public static final class Factory implements SubjectFactory {
        @Override public String name() { return "chronicle-raw"; }
        @Override public String description() {
            return "open-source Chronicle Queue, writeBytes/readBytes (the baseline)";
        }
        @Override public Role role() { return Role.BASELINE; }
        @Override public boolean persists() { return true; }
        @Override public Subject open(SubjectConfig config) {
            return new ChronicleRawSubject(config);
        }
    }

    private final SubjectConfig config;
    private final SingleChronicleQueue queue;

    ChronicleRawSubject(SubjectConfig config) {
        this.config = config;
        this.queue = SingleChronicleQueueBuilder.single(config.queueDir().toFile())
                .rollCycle(RollCycles.FAST_DAILY)
                .build();
    }

    @Override
    public Producer producer() {
        ExcerptAppender appender = queue.createAppender();
        Bytes<?> message = Bytes.allocateDirect(config.messageSize());
        message.zeroOut(0, config.messageSize());
        message.writeSkip(config.messageSize());
        return new Producer() {
            @Override public void send(long intendedNanos) {
                message.writeLong(0, intendedNanos);
                appender.writeBytes(message);
            }

            @Override public void close() {
                appender.close();
                message.releaseLast();
            }
        };
    }

    @Override
    public Consumer consumer() {
        ExcerptTailer tailer = queue.createTailer();
        Bytes<?> in = Bytes.allocateElasticDirect(Math.max(64, config.messageSize() * 2L));
        return new Consumer() {
            @Override public long poll() {
                in.clear();
                return tailer.readBytes(in) ? in.readLong(0) : NONE;
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
