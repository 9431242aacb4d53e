package io.queueenterprise.cli;

import io.queueenterprise.remote.AppendListener;
import io.queueenterprise.remote.RemoteAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.replication.history.OperationHistory;
import io.queueenterprise.replication.node.AdminClient;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The test's hands inside a {@link NetworkLab}: a child JVM in a host namespace of its own that reaches the nodes
 * through the lab's switch (nothing routes from the machine's namespace into the lab). One command per stdin line,
 * one answer line ({@code OK ...} or {@code ERR ...}) on stdout:
 * <ul>
 *   <li>{@code promote <replica> <term>}, {@code follow <replica> <leader-replica> <term>}: the admin endpoint;</li>
 *   <li>{@code durable <replica>} (its queue's durable index), {@code acknowledging <replica>} (lease held);</li>
 *   <li>{@code write}: starts {@value #WRITERS} remote clients ({@link RemoteQueue}, one each), each appending its
 *       numbered stream with {@link RemoteAppender#writeAsync} and a window of {@code window}, paced at {@code rate}
 *       a second; {@code inflight}: the sum of their windows' appends in flight;</li>
 *   <li>{@code pause}, {@code resume}: the remote clients issue no new appends meanwhile;</li>
 *   <li>{@code stop}: flushes, closes, writes every append's call and return ({@link OperationHistory} lines) and each
 *       acknowledged message's index ({@code client n index} lines) and answers with the counts.</li>
 * </ul>
 * Arguments: admin addresses (comma), admin token file, client addresses (comma), client credential, key directory,
 * queue, window, rate, history file, acknowledged file. Client ids in the history: the writer's number (0, 1).
 */
final class ClusterDriver {
    static final int WRITERS = 2;

    private final List<String> adminAddresses;
    private final String token;
    private final List<String> clientAddresses;
    private final Path clientCredential;
    private final Path keyDirectory;
    private final String queue;
    private final int window;
    private final int rate;
    private final OperationHistory history = new OperationHistory();
    private final Map<Long, Long> acknowledged = new ConcurrentHashMap<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private volatile boolean paused;
    private final RemoteAppender[] appenders = new RemoteAppender[WRITERS];
    private final long[] written = new long[WRITERS];
    private final int[] timedOut = new int[WRITERS];
    private final List<Thread> writers = new ArrayList<>();

    private ClusterDriver(String[] a) throws Exception {
        adminAddresses = List.of(a[0].split(","));
        token = Files.readString(Path.of(a[1]), StandardCharsets.US_ASCII).strip();
        clientAddresses = List.of(a[2].split(","));
        clientCredential = Path.of(a[3]);
        keyDirectory = Path.of(a[4]);
        queue = a[5];
        window = Integer.parseInt(a[6]);
        rate = Integer.parseInt(a[7]);
    }

    public static void main(String[] args) throws Exception {
        ClusterDriver driver = new ClusterDriver(args);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("READY");
        String line;
        while ((line = in.readLine()) != null) {
            try {
                out.println("OK " + driver.handle(line.split(" "), Path.of(args[8]), Path.of(args[9])));
            } catch (Throwable e) {
                out.println("ERR " + e.toString().replace('\n', ' '));
            }
        }
        driver.stop.set(true);
        System.exit(0);
    }

    private String handle(String[] c, Path historyFile, Path acknowledgedFile) throws Exception {
        switch (c[0]) {
            case "promote":
                admin(c[1]).promote(Long.parseLong(c[2]));
                return "";
            case "follow":
                admin(c[1]).follow(LocalCluster.nodeId(Integer.parseInt(c[2])), Long.parseLong(c[3]));
                return "";
            case "durable":
                return Long.toString(admin(c[1]).status().queues().get(0).durableIndex());
            case "status":
                return admin(c[1]).status().toString().replace('\n', ' ');
            case "acknowledging":
                return Boolean.toString(admin(c[1]).status().lease().acknowledging());
            case "write":
                for (int w = 0; w < WRITERS; w++) {
                    int client = w;
                    Thread t = new Thread(() -> write(client), "remote-writer-" + w);
                    writers.add(t);
                    t.start();
                }
                return "";
            case "pause": // no new appends (those in flight still settle) while the test waits on something slow
                paused = true;
                return "";
            case "resume":
                paused = false;
                return "";
            case "inflight": {
                long sum = 0;
                for (RemoteAppender a : appenders) {
                    sum += a == null ? 0 : a.inFlight();
                }
                return Long.toString(sum);
            }
            case "stop": {
                stop.set(true);
                for (Thread t : writers) {
                    t.join(120_000);
                }
                history.write(historyFile);
                try (Writer w = Files.newBufferedWriter(acknowledgedFile, StandardCharsets.US_ASCII)) {
                    for (Map.Entry<Long, Long> e : acknowledged.entrySet()) {
                        w.write((e.getKey() >>> 32) + " " + (e.getKey() & 0xFFFF_FFFFL) + " " + e.getValue() + "\n");
                    }
                }
                Throwable f = failure.get();
                return "written=" + written[0] + "," + written[1] + " acknowledged=" + acknowledged.size() + " timedOut="
                        + (timedOut[0] + timedOut[1]) + (f == null ? "" : " failure=" + f.toString().replace('\n', ' '));
            }
            default:
                throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private AdminClient admin(String replica) throws Exception {
        return new AdminClient(adminAddresses.get(Integer.parseInt(replica)), token);
    }

    /** One remote writer until {@code stop}; its message n is {@link #message}. */
    private void write(int client) {
        Map<Long, OperationHistory.Append> ops = new ConcurrentHashMap<>();
        AppendListener listener = new AppendListener() {
            @Override
            public void onAcknowledged(long n, long index) {
                ops.remove(n).ok(index);
                acknowledged.put((long) client << 32 | n, index);
            }

            @Override
            public void onFailed(long n, RemoteQueueException e) {
                OperationHistory.Append op = ops.remove(n);
                if (!e.mayBeAppended()) {
                    op.refused();
                    failure.compareAndSet(null, e);
                    return;
                }
                op.unknown(); // timed out: in the queue at most once
                timedOut[client]++;
            }
        };
        try (RemoteQueue remote = RemoteQueue.builder(clientAddresses).queue(queue).clientCredential(clientCredential)
                .keyDirectory(keyDirectory).ackTimeout(Duration.ofSeconds(20)).backPressureTimeout(Duration.ofSeconds(20))
                .window(window, RemoteQueue.DEFAULT_WINDOW_BYTES).build();
             RemoteAppender appender = remote.createAppender(listener)) {
            appenders[client] = appender;
            long started = System.nanoTime();
            for (long n = 0; !stop.get(); n++) {
                if (paused) {
                    while (paused && !stop.get()) {
                        if (appender.poll() == 0) {
                            LockSupport.parkNanos(1_000_000);
                        }
                    }
                    started = System.nanoTime() - n * (1_000_000_000L / rate); // no burst after the pause
                }
                while (n > (System.nanoTime() - started) / (1_000_000_000L / rate) && !stop.get()) {
                    if (appender.poll() == 0) { // paced: drive acknowledgements meanwhile
                        LockSupport.parkNanos(100_000);
                    }
                }
                byte[] message = message(client, n);
                ops.put(n, history.append(client, queue, message));
                written[client] = n + 1;
                appender.writeAsync(message, 0, message.length, n);
            }
            appender.flush();
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    static byte[] message(int client, long n) {
        return ("remote " + client + " " + n).getBytes(StandardCharsets.US_ASCII);
    }
}
