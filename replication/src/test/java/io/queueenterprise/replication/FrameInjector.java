package io.queueenterprise.replication;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.queueenterprise.replication.engine.ReplicationAgent;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;

/** A hostile sender: its own media driver, publishing arbitrary bytes to a node's replication endpoint on loopback. */
final class FrameInjector implements AutoCloseable {
    private final Path dir;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final ExclusivePublication publication;

    FrameInjector(int port) throws Exception {
        dir = Files.createTempDirectory(Path.of("/dev/shm"), "qe-injector-");
        driver = MediaDriver.launch(new MediaDriver.Context().aeronDirectoryName(dir.toString())
                .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new SleepingMillisIdleStrategy(1))
                .dirDeleteOnStart(true).dirDeleteOnShutdown(true).termBufferSparseFile(true)
                .publicationTermBufferLength(1 << 20));
        aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir.toString()));
        publication = aeron.addExclusivePublication("aeron:udp?endpoint=127.0.0.1:" + port, ReplicationAgent.STREAM_ID);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!publication.isConnected() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        if (!publication.isConnected()) {
            throw new IllegalStateException("the node's endpoint did not connect");
        }
    }

    void send(byte[] frame) throws InterruptedException {
        UnsafeBuffer buffer = new UnsafeBuffer(frame);
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (publication.offer(buffer, 0, frame.length) < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("could not send");
            }
            Thread.sleep(1);
        }
    }

    @Override
    public void close() {
        aeron.close();
        driver.close();
    }
}
