package io.queueenterprise.bench.subject;

import io.queueenterprise.replication.LoopbackPorts;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reference for the replicated subjects: a raw Aeron round trip over UDP loopback, with no queue and no
 * encryption. The producer offers a message on a "ping" stream; an echo thread polls it and offers it back on a
 * "pong" stream; the consumer polls "pong". So the latency the harness records is the intended send time to
 * the pong's arrival: one UDP round trip through one embedded media driver (SHARED threading: conductor,
 * sender and receiver on one busy-spinning thread), queueing included. Four busy threads (producer, echo,
 * consumer, driver): meaningful on a machine with cores for them, not on a 2-core one.
 */
public final class AeronUdpRoundTripSubject implements Subject {

    /** Registered as {@code peer-aeron-udp-rtt}. */
    public static final class Factory implements SubjectFactory {
        @Override public String name() { return "peer-aeron-udp-rtt"; }
        @Override public String description() {
            return "raw Aeron UDP loopback round trip (ping -> echo thread -> pong), one embedded media driver, no queue";
        }
        @Override public Role role() { return Role.PEER; }
        @Override public boolean persists() { return false; }
        @Override public Subject open(SubjectConfig config) {
            return new AeronUdpRoundTripSubject(config);
        }
    }

    private static final int PING_STREAM = 1001;
    private static final int PONG_STREAM = 1002;
    private static final long CONNECT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final int messageSize;
    private final Path aeronDir;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final Publication ping;
    private final Subscription pingIn;
    private final Publication pong;
    private final Subscription pongIn;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread echo;

    AeronUdpRoundTripSubject(SubjectConfig config) {
        this.messageSize = config.messageSize();
        this.aeronDir = aeronDirectory();
        MediaDriver startedDriver = null;
        Aeron connected = null;
        try {
            startedDriver = MediaDriver.launchEmbedded(new MediaDriver.Context()
                    .aeronDirectoryName(aeronDir.toString())
                    .threadingMode(ThreadingMode.SHARED)
                    .sharedIdleStrategy(new BusySpinIdleStrategy())
                    .dirDeleteOnStart(true)
                    .dirDeleteOnShutdown(true));
            connected = Aeron.connect(new Aeron.Context().aeronDirectoryName(startedDriver.aeronDirectoryName()));
            String pingChannel = "aeron:udp?endpoint=127.0.0.1:" + LoopbackPorts.freeUdpPort();
            String pongChannel = "aeron:udp?endpoint=127.0.0.1:" + LoopbackPorts.freeUdpPort();
            pingIn = connected.addSubscription(pingChannel, PING_STREAM);
            pongIn = connected.addSubscription(pongChannel, PONG_STREAM);
            ping = connected.addPublication(pingChannel, PING_STREAM);
            pong = connected.addPublication(pongChannel, PONG_STREAM);
            awaitConnected(ping);
            awaitConnected(pong);
        } catch (RuntimeException e) {
            CloseHelper.quietCloseAll(connected, startedDriver);
            throw e;
        }
        this.driver = startedDriver;
        this.aeron = connected;
        this.echo = new Thread(this::echoLoop, "aeron-rtt-echo");
        this.echo.setDaemon(true);
        this.echo.start();
    }

    private static Path aeronDirectory() {
        Path shm = Path.of("/dev/shm");
        try {
            Path parent = Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
            Path dir = Files.createTempDirectory(parent, "qe-bench-aeron-");
            Files.delete(dir); // the driver creates it (dirDeleteOnStart); we only wanted a unique name
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void awaitConnected(Publication publication) {
        long deadline = System.nanoTime() + CONNECT_TIMEOUT_NANOS;
        while (!publication.isConnected()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Aeron publication " + publication.channel() + " did not connect in 10 s");
            }
            Thread.onSpinWait();
        }
    }

    /** Offers until accepted: back-pressure is waited out, never dropped (a drop would hide latency). */
    private void offerFully(Publication publication, UnsafeBuffer buffer, int offset, int length) {
        while (true) {
            long result = publication.offer(buffer, offset, length);
            if (result > 0) {
                return;
            }
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                throw new IllegalStateException("Aeron publication " + publication.channel() + " refused: " + result);
            }
            if (!running.get()) {
                return;
            }
            Thread.onSpinWait(); // BACK_PRESSURED, ADMIN_ACTION, NOT_CONNECTED (transient)
        }
    }

    private void echoLoop() {
        UnsafeBuffer out = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, messageSize), 64));
        FragmentHandler handler = new FragmentAssembler((buffer, offset, length, header) -> {
            out.putBytes(0, buffer, offset, length);
            offerFully(pong, out, 0, length);
        });
        while (running.get()) {
            if (pingIn.poll(handler, 16) == 0) {
                Thread.onSpinWait();
            }
        }
    }

    @Override
    public Producer producer() {
        UnsafeBuffer message = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, messageSize), 64));
        return intendedNanos -> {
            message.putLong(0, intendedNanos, ByteOrder.LITTLE_ENDIAN);
            offerFully(ping, message, 0, messageSize);
        };
    }

    @Override
    public Consumer consumer() {
        return new Consumer() {
            private long received = NONE;
            private final FragmentHandler handler = new FragmentAssembler(
                    (buffer, offset, length, header) -> received = buffer.getLong(offset, ByteOrder.LITTLE_ENDIAN));

            @Override public long poll() {
                received = NONE;
                pongIn.poll(handler, 1);
                return received;
            }
        };
    }

    @Override
    public void close() {
        running.set(false);
        try {
            echo.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        CloseHelper.quietCloseAll(aeron, driver);
        if (Files.exists(aeronDir)) {
            org.agrona.IoUtil.delete(aeronDir.toFile(), true);
        }
    }
}
