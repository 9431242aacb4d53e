package io.queueenterprise.kubernetes.probe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

import net.openhft.affinity.Affinity;

/**
 * Reads the cores this container was granted, pins a hot thread there (or, in shared mode, lets
 * spinning threads run unpinned) and reports, as one JSON line, what the kernel says: the
 * process's {@code Cpus_allowed_list}, the hot thread's own list after pinning, and every CPU the
 * spinning threads were seen running on. The first report is printed as soon as the threads spin
 * ({@code GRANTED_CORES {...}}), then every second the CPUs observed so far
 * ({@code GRANTED_CORES_PROGRESS {...}}), and the final one at the end ({@code GRANTED_CORES_FINAL
 * {...}}), also written to the termination log.
 *
 * <pre>
 * GrantedCoresReport [--mode pinned|shared] [--threads N] [--hold-seconds S]
 *                    [--park-between-samples true|false] [--termination-log PATH]
 * </pre>
 * The threads busy-spin like a real hot thread unless {@code --park-between-samples true}: on
 * cgroup v1 a pod cgroup's CPU weight is split across CPUs by where its load is, so a pod that
 * busy-spins on its exclusive core leaves the shared pool's pods almost no weight on the other
 * core while the host is busy (a BestEffort pod's start was seen taking 5 minutes here).
 * Exit codes: 0 reported, 1 pinning did not take effect, 2 bad arguments.
 */
public final class GrantedCoresReport {
    private static final long SAMPLE_INTERVAL_NANOS = 1_000_000;
    private static final long PROGRESS_INTERVAL_MILLIS = 1_000;

    enum Mode { PINNED, SHARED }

    /** {@code parkBetweenSamples}: sleep between samples instead of busy-spinning (see the option's help). */
    record Options(Mode mode, int threads, int holdSeconds, boolean parkBetweenSamples, Path terminationLog) {
        static Options parse(String... args) {
            Mode mode = Mode.PINNED;
            int threads = 2;
            int holdSeconds = 20;
            boolean parkBetweenSamples = false;
            Path terminationLog = Path.of("/dev/termination-log");
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                String value = args[++i];
                switch (name) {
                    case "--mode" -> mode = switch (value) {
                        case "pinned" -> Mode.PINNED;
                        case "shared" -> Mode.SHARED;
                        default -> throw new IllegalArgumentException("--mode must be pinned or shared, not '" + value + "'");
                    };
                    case "--threads" -> threads = positive(name, value);
                    case "--hold-seconds" -> holdSeconds = positive(name, value);
                    case "--park-between-samples" -> parkBetweenSamples = switch (value) {
                        case "true" -> true;
                        case "false" -> false;
                        default -> throw new IllegalArgumentException("--park-between-samples must be true or false, not '" + value + "'");
                    };
                    case "--termination-log" -> terminationLog = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown option '" + name + "'");
                }
            }
            return new Options(mode, mode == Mode.PINNED ? 1 : threads, holdSeconds, parkBetweenSamples, terminationLog);
        }

        private static int positive(String name, String value) {
            try {
                int number = Integer.parseInt(value);
                if (number > 0) {
                    return number;
                }
            } catch (NumberFormatException ignored) {
                // reported below with the option's name
            }
            throw new IllegalArgumentException(name + " must be a positive integer, not '" + value + "'");
        }
    }

    private GrantedCoresReport() {
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("GrantedCoresReport: " + e.getMessage());
            System.exit(2);
            return;
        }
        System.exit(run(options));
    }

    static int run(Options options) throws InterruptedException, IOException {
        BitSet granted = ProcStatus.processCpusAllowed();
        int hotCore = granted.nextSetBit(0);
        Affinity.getAffinityImpl();   // loads the native library before any thread starts its hold time
        long holdNanos = options.holdSeconds() * 1_000_000_000L;
        CountDownLatch spinning = new CountDownLatch(options.threads());
        List<Spinner> spinners = new ArrayList<>();
        for (int i = 0; i < options.threads(); i++) {
            Spinner spinner = new Spinner(options.mode() == Mode.PINNED ? hotCore : -1, holdNanos, options.parkBetweenSamples(), spinning);
            spinners.add(spinner);
            Thread thread = new Thread(spinner, "qe-hot-" + i);
            spinner.thread = thread;
            thread.start();
        }
        spinning.await();
        for (Spinner spinner : spinners) {
            if (spinner.pinningFailure != null) {
                System.err.println("GrantedCoresReport: " + spinner.pinningFailure);
                return 1;
            }
        }
        System.out.println("GRANTED_CORES " + json(options, granted, hotCore, spinners));
        System.out.flush();
        // Progress once a second, so an observer can read "where did it run so far" while the
        // threads still spin (the cores a pod holds are only exclusive while it runs).
        for (Spinner spinner : spinners) {
            while (spinner.thread.isAlive()) {
                spinner.thread.join(PROGRESS_INTERVAL_MILLIS);
                if (spinner.thread.isAlive()) {
                    System.out.println("GRANTED_CORES_PROGRESS " + json(options, granted, hotCore, spinners));
                    System.out.flush();
                }
            }
        }
        String report = json(options, granted, hotCore, spinners);
        System.out.println("GRANTED_CORES_FINAL " + report);
        if (Files.isWritable(options.terminationLog())) {
            Files.writeString(options.terminationLog(), report, StandardCharsets.UTF_8);
        }
        return 0;
    }

    private static String json(Options options, BitSet granted, int hotCore, List<Spinner> spinners) {
        BitSet observed = new BitSet();
        long samples = 0;
        for (Spinner spinner : spinners) {
            observed.or(spinner.observed);
            samples += spinner.samples;
        }
        // a flat document of numbers and CPU lists: written by hand so the image needs no JSON library
        Spinner first = spinners.get(0);
        return "{\"mode\":\"" + options.mode().name().toLowerCase() + "\""
            + ",\"processCpusAllowed\":\"" + CpuList.format(granted) + "\""
            + ",\"hotThreadCore\":" + (options.mode() == Mode.PINNED ? hotCore : -1)
            + ",\"hotThreadCpusAllowed\":\"" + CpuList.format(first.cpusAllowedAfterPinning) + "\""
            + ",\"affinityImplementation\":\"" + Affinity.getAffinityImpl().getClass().getSimpleName() + "\""
            + ",\"threads\":" + spinners.size()
            + ",\"observedCpus\":\"" + CpuList.format(observed) + "\""
            + ",\"samples\":" + samples + "}";
    }

    /** Spins for the hold time, sampling the CPU it runs on every millisecond; pinned to one core when given one. */
    private static final class Spinner implements Runnable {
        private final int core;
        private final long holdNanos;
        private final boolean parkBetweenSamples;
        private final CountDownLatch spinning;
        /** Replaced (never mutated) when a new CPU is seen, so other threads read a consistent set. */
        volatile BitSet observed = new BitSet();
        volatile BitSet cpusAllowedAfterPinning = new BitSet();
        volatile String pinningFailure;
        volatile long samples;   // one writer
        Thread thread;

        Spinner(int core, long holdNanos, boolean parkBetweenSamples, CountDownLatch spinning) {
            this.parkBetweenSamples = parkBetweenSamples;
            this.core = core;
            this.holdNanos = holdNanos;
            this.spinning = spinning;
        }

        @Override
        public void run() {
            if (core >= 0) {
                Affinity.setAffinity(core);
            }
            // the kernel's view, not the library's: a library that silently cannot pin shows here
            cpusAllowedAfterPinning = ProcStatus.threadCpusAllowed();
            if (core >= 0 && !cpusAllowedAfterPinning.equals(single(core))) {
                pinningFailure = "pinning to core " + core + " did not take effect: the thread's Cpus_allowed_list is '"
                    + CpuList.format(cpusAllowedAfterPinning) + "' (affinity implementation "
                    + Affinity.getAffinityImpl().getClass().getSimpleName() + ")";
                spinning.countDown();
                return;
            }
            spinning.countDown();
            long now = System.nanoTime();
            long deadline = now + holdNanos;
            long nextSample = now;
            while (now - deadline < 0) {
                if (now - nextSample >= 0) {
                    int cpu = ProcStatus.threadLastProcessor();
                    if (!observed.get(cpu)) {
                        BitSet seen = (BitSet) observed.clone();
                        seen.set(cpu);
                        observed = seen;
                    }
                    samples++;
                    nextSample = now + SAMPLE_INTERVAL_NANOS;
                    if (parkBetweenSamples) {
                        LockSupport.parkNanos(SAMPLE_INTERVAL_NANOS);
                    }
                }
                now = System.nanoTime();
            }
        }

        private static BitSet single(int cpu) {
            BitSet set = new BitSet();
            set.set(cpu);
            return set;
        }
    }
}
