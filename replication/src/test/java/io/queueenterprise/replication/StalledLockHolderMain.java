package io.queueenterprise.replication;

import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM that opens an excerpt in a queue directory (FAST_DAILY), so that it holds Chronicle's write lock, prints
 * {@code LOCKED}, and waits: the test stops it (SIGSTOP) as a live writer stalled inside Chronicle, continues it, and
 * then sends a line on stdin; the excerpt is rolled back (nothing written, the lock released) and the process prints
 * {@code RELEASED} and exits. It exits by itself after 120 s.
 */
public final class StalledLockHolderMain {
    private StalledLockHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Thread stdin = new Thread(() -> {
            try {
                System.in.read();
            } catch (java.io.IOException ignored) {
                // the parent is gone: release as well
            }
            release.countDown();
        });
        stdin.setDaemon(true);
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.single(args[0]).rollCycle(RollCycles.FAST_DAILY).build();
             ExcerptAppender appender = queue.createAppender()) {
            try (DocumentContext excerpt = appender.writingDocument()) {
                excerpt.wire().bytes().write(new byte[100]);
                System.out.println("LOCKED");
                System.out.flush();
                stdin.start();
                release.await(120, TimeUnit.SECONDS);
                excerpt.rollbackOnClose();
            }
            System.out.println("RELEASED");
            System.out.flush();
        }
    }
}
