package io.queueenterprise.protocol.transport;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.concurrent.AgentInvoker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * An embedded Aeron media driver and client driven by their owner's thread (INVOKER mode): launched, invoked each
 * duty cycle, checked, and restarted in place when they died. Depends on Aeron and Agrona only: the node
 * ({@code ReplicationAgent}) and the remote client ({@code AeronClientTransport}, when the application gives it no
 * Aeron client of its own) both run on it.
 *
 * <p>Client and driver share one thread and process, so their mutual liveness checks guard nothing: at Aeron's 10 s
 * default a stall of the owner's thread (Chronicle waiting out a dead writer's lock, 20-40 s measured after SIGKILL;
 * a long GC, SIGSTOP) killed the client ("service interval exceeded"). The liveness timeout here is long instead;
 * peers still see a stalled owner at once (image liveness and connection timeouts keep their defaults). A longer
 * stall still ends the pair: {@link #check} restarts it. What runs on the pair (subscriptions, publications) is the
 * owner's {@link Attachments}, re-made after each restart. One thread only, except the getters marked "any thread".
 */
public final class EmbeddedTransport implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedTransport.class);
    /** How often {@link #check} looks at the pair. */
    public static final long CHECK_NANOS = 100_000_000L;
    /** How long a failed restart waits before the next try. */
    public static final long RESTART_BACKOFF_NANOS = 5_000_000_000L;

    /** What the owner runs on the pair: made on start and after every restart, dropped when the pair died. */
    public interface Attachments {
        /** Adds subscriptions and publications to a freshly started client; a failure is thrown. */
        void attach(Aeron aeron);

        /** The pair died: forget (and close quietly) everything attached to it before it is closed. */
        void detach();

        /** Whether something attached was closed under its owner (a subscription, say): the pair is then dead too. */
        default boolean closed() {
            return false;
        }

        /** Called once per {@link #CHECK_NANOS} while the pair is up: late work such as a publication to a peer. */
        default void onCheck() {
        }
    }

    private final String owner;
    private final Path directory;
    private final long livenessTimeoutNs;
    private final int publicationTermLength;
    private final int ipcTermLength;
    private Attachments attachments;
    private MediaDriver driver;
    private Aeron aeron;
    private AgentInvoker driverInvoker;
    private AgentInvoker clientInvoker;
    private long lastCheckNanos;
    private long lastRestartNanos;
    private volatile String problem;
    private volatile long restarts;
    private String lastRestartCause;
    private long lastRestartAtMillis;

    /**
     * @param owner                 who runs it, for the log
     * @param directory             the Aeron directory (deleted on start and on close)
     * @param livenessTimeoutNs     how long the pair tolerates a stalled owner thread
     * @param publicationTermLength term buffer length of UDP publications (sparse files)
     * @param ipcTermLength         term buffer length of IPC publications
     */
    public EmbeddedTransport(String owner, Path directory, long livenessTimeoutNs, int publicationTermLength,
                             int ipcTermLength) {
        this.owner = owner;
        this.directory = directory;
        this.livenessTimeoutNs = livenessTimeoutNs;
        this.publicationTermLength = publicationTermLength;
        this.ipcTermLength = ipcTermLength;
    }

    /** Launches the pair and attaches the owner's resources; a failure is thrown (whatever was launched stays to close). */
    public void start(Attachments attachments, long nowNanos) {
        this.attachments = attachments;
        launch();
        attachments.attach(aeron);
        lastCheckNanos = nowNanos;
    }

    private void launch() {
        driver = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(directory.toString())
                .threadingMode(ThreadingMode.INVOKER)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .clientLivenessTimeoutNs(livenessTimeoutNs)
                .publicationUnblockTimeoutNs(livenessTimeoutNs + TimeUnit.SECONDS.toNanos(10))
                .termBufferSparseFile(true)
                .publicationTermBufferLength(publicationTermLength)
                .ipcTermBufferLength(ipcTermLength)
                .warnIfDirectoryExists(false));
        driverInvoker = driver.sharedAgentInvoker();
        aeron = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(directory.toString())
                .useConductorAgentInvoker(true)
                .driverTimeoutMs(TimeUnit.NANOSECONDS.toMillis(livenessTimeoutNs))
                .driverAgentInvoker(driverInvoker));
        clientInvoker = aeron.conductorAgentInvoker();
    }

    /** Runs the driver's and the client's duty cycles once; the work they did. */
    public int invoke() {
        return driverInvoker.invoke() + clientInvoker.invoke();
    }

    /** The client, for attaching; replaced by a restart. */
    public Aeron aeron() {
        return aeron;
    }

    /** The client or the driver (or something attached) has closed: the pair is dead until restarted. */
    public boolean dead() {
        return aeron == null || aeron.isClosed() || clientInvoker.isClosed() || driverInvoker.isClosed()
                || attachments == null || attachments.closed();
    }

    /**
     * Once per {@link #CHECK_NANOS}: whether the pair died, and if so restarts it (a failed restart is tried again
     * after {@link #RESTART_BACKOFF_NANOS}). Both run on the owner's thread, so a stall of it longer than their
     * liveness timeout (SIGSTOP, a GC pause) makes the client fail and close everything attached; the owner would
     * then never send again.
     *
     * @return 1 when it restarted (or tried to), else 0
     */
    public int check(long now) {
        if (now - lastCheckNanos < CHECK_NANOS) {
            return 0;
        }
        lastCheckNanos = now;
        if (problem == null) {
            attachments.onCheck();
        }
        if (problem == null && !dead()) {
            return 0;
        }
        if (problem != null && now - lastRestartNanos < RESTART_BACKOFF_NANOS) {
            return 0;
        }
        restart(now);
        return 1;
    }

    /**
     * Closes what is left of the dead pair and starts a new one in the same directory, then attaches again. On
     * failure the reason stays in {@link #problem()} and the restart is tried again later.
     */
    private void restart(long now) {
        lastRestartNanos = now;
        restarts++;
        String cause = problem != null ? "still down after a failed restart (" + problem + ")"
                : "the embedded Aeron client or driver closed (a duty-thread stall longer than "
                + TimeUnit.NANOSECONDS.toMillis(livenessTimeoutNs) + " ms?)";
        LOG.error(owner + ": " + cause + "; restarting it (restart " + restarts + ")");
        problem = "restarting the embedded Aeron client and driver: " + cause;
        lastRestartCause = cause;
        lastRestartAtMillis = System.currentTimeMillis();
        attachments.detach();
        closeQuietly(aeron == null ? null : aeron::close);
        closeQuietly(driver == null ? null : driver::close);
        try {
            launch();
            attachments.attach(aeron);
        } catch (RuntimeException e) {
            problem = "the embedded Aeron client and driver could not be restarted: " + e;
            LOG.error(owner + ": " + problem, e);
            return;
        }
        problem = null;
        LOG.info(owner + ": embedded Aeron client and driver restarted");
    }

    /** Why the pair is down (restarting, or a restart failed); null when it is up. Any thread. */
    public String problem() {
        return problem;
    }

    /** Restarts tried since start (failed ones included). Any thread. */
    public long restarts() {
        return restarts;
    }

    /** Why the latest restart was needed; null when none was. Owner's thread. */
    public String lastRestartCause() {
        return lastRestartCause;
    }

    /** When the latest restart was tried (epoch ms); 0 when none was. Owner's thread. */
    public long lastRestartAtMillis() {
        return lastRestartAtMillis;
    }

    /** Closes the client and the driver (each on its own: a failed client must not keep the driver open). */
    @Override
    public void close() {
        closeQuietly(aeron == null ? null : aeron::close);
        closeQuietly(driver == null ? null : driver::close);
    }

    /** Test hook: closes the client as its conductor does when it dies. */
    public void closeClientForTest() {
        aeron.close();
    }

    /** Test hook: closes the client and the driver, then runs {@code whileDown} before the owner can notice. */
    public void closeForTest(Runnable whileDown) {
        aeron.close();
        driver.close();
        whileDown.run();
    }

    private void closeQuietly(Runnable close) {
        closeQuietly(owner, close);
    }

    /**
     * Runs {@code close} (none when null) of something on a pair that may have died already, where a failure is
     * expected and only logged at DEBUG: the one way the owner's own attachments are closed too.
     */
    public static void closeQuietly(String owner, Runnable close) {
        if (close == null) {
            return;
        }
        try {
            close.run();
        } catch (RuntimeException e) {
            LOG.debug(owner + ": closing a dead Aeron resource: " + e);
        }
    }
}
