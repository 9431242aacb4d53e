package io.queueenterprise.bench.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The CPUs this process was granted ({@code Cpus_allowed_list} of /proc/self/status: what taskset,
 * a cgroup cpuset or a Kubernetes static CPU manager gave it), as opposed to the machine's CPUs.
 *
 * @param list the kernel's text, e.g. {@code "2-3,6"}, or {@code "unknown"} off Linux
 * @param cpus the CPU numbers it names, ascending
 */
public record Cores(String list, List<Integer> cpus) {

    /** Reads /proc/self/status; off Linux, 0..availableProcessors-1 with list "unknown". */
    public static Cores granted() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    String list = line.substring(line.indexOf(':') + 1).trim();
                    return new Cores(list, parse(list));
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux: fall through
        }
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            all.add(i);
        }
        return new Cores("unknown", all);
    }

    /** "0-2,5" -> [0, 1, 2, 5]. */
    static List<Integer> parse(String list) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : list.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int dash = p.indexOf('-');
            int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
            int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
            for (int c = from; c <= to; c++) {
                cpus.add(c);
            }
        }
        return List.copyOf(cpus);
    }

    public int count() {
        return cpus.size();
    }
}
