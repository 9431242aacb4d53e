package io.queueenterprise.replication;

import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * A child JVM that starts an excerpt in a queue directory (FAST_DAILY), prints {@code WRITING} with the excerpt
 * half written and Chronicle's write lock held, and waits to be SIGKILLed: it leaves an incomplete header and a dead
 * process's lock, which the next opener must recover. Exits by itself after 120 s.
 */
public final class KilledWriterMain {
    private KilledWriterMain() {
    }

    @SuppressWarnings("try") // the excerpt stays open until the process is killed
    public static void main(String[] args) throws Exception {
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.single(args[0]).rollCycle(RollCycles.FAST_DAILY).build();
             ExcerptAppender appender = queue.createAppender();
             DocumentContext excerpt = appender.writingDocument()) {
            excerpt.wire().bytes().write(new byte[1000]);
            System.out.println("WRITING");
            System.out.flush();
            Thread.sleep(120_000);
        }
    }
}
