package io.queueenterprise.bench.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Measures how much the machine interrupts a busy-spinning thread: one thread per harness role
 * (pinned like the producer and consumer) spins on {@code System.nanoTime()} for a while and
 * records every gap longer than 1 µs. On a quiet, isolated core the largest gap is a few µs; on a
 * shared 2-core machine it is the scheduler's time slice (milliseconds). Reported beside the
 * results so a reader can tell an instrument's finding from the machine's noise.
 *
 * @param seconds      how long each thread spun
 * @param loadAvgStart /proc/loadavg before the bench
 * @param loadAvgEnd   /proc/loadavg after it (filled in at the end)
 * @param threads      per pinned role: gaps over 1 µs, the largest gap, the share of time lost
 */
public record NoiseProbe(double seconds, String loadAvgStart, String loadAvgEnd, List<ThreadNoise> threads) {

    /** One spinning thread's view. */
    public record ThreadNoise(String role, long gapsOver1us, long gapsOver100us, long maxGapNs, double lostFraction) {
        /** "2.6 % of the producer core lost, largest stall 1.5 ms". */
        public String inWords() {
            return String.format("%.1f %% of the %s core lost, largest stall %s", lostFraction * 100, role,
                    maxGapNs >= 1_000_000 ? String.format("%.1f ms", maxGapNs / 1e6)
                            : String.format("%.0f us", maxGapNs / 1e3));
        }
    }

    /** "2.6 % of the producer core lost; largest stall 1.5 ms. 0.1 % of the consumer core lost; ..." */
    public String inWords() {
        StringBuilder sb = new StringBuilder();
        for (ThreadNoise t : threads) {
            if (sb.length() > 0) {
                sb.append("; ");
            }
            sb.append(t.inWords());
        }
        return sb.toString();
    }

    public NoiseProbe withLoadAvgEnd(String end) {
        return new NoiseProbe(seconds, loadAvgStart, end, threads);
    }

    public static String loadAvg() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    public static NoiseProbe measure(double seconds, Pinning pinning) throws InterruptedException {
        String load = loadAvg();
        String[] roles = {Pinning.PRODUCER, Pinning.CONSUMER};
        ThreadNoise[] out = new ThreadNoise[roles.length];
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < roles.length; i++) {
            final int k = i;
            Thread t = new Thread(() -> {
                pinning.pinCurrentThread(roles[k]);
                long end = System.nanoTime() + (long) (seconds * 1e9);
                long last = System.nanoTime();
                long over1 = 0;
                long over100 = 0;
                long max = 0;
                long lost = 0;
                long now;
                while ((now = System.nanoTime()) < end) {
                    long gap = now - last;
                    if (gap > 1_000) {
                        over1++;
                        lost += gap;
                        if (gap > 100_000) {
                            over100++;
                        }
                        if (gap > max) {
                            max = gap;
                        }
                    }
                    last = now;
                }
                out[k] = new ThreadNoise(roles[k], over1, over100, max, lost / (seconds * 1e9));
            }, "qe-bench-noise-" + roles[i]);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        return new NoiseProbe(seconds, load, null, List.of(out));
    }
}
