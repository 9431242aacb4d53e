package io.queueenterprise.kubernetes.probe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;

/**
 * What the kernel says about the calling process and thread. Inside a pod,
 * {@code Cpus_allowed_list} is the reliable view of the granted cores: it is the cpuset the
 * kubelet's CPU manager set, whatever the cgroup version, and it also shows a thread's own pinning.
 */
final class ProcStatus {
    private static final Path PROCESS_STATUS = Path.of("/proc/self/status");
    private static final Path THREAD_STATUS = Path.of("/proc/thread-self/status");
    private static final Path THREAD_STAT = Path.of("/proc/thread-self/stat");
    /** Field 39 of /proc/[pid]/stat: the CPU the thread last ran on; counted from field 3 after "(comm)". */
    private static final int PROCESSOR_FIELD_AFTER_COMM = 39 - 3;

    private ProcStatus() {
    }

    static BitSet processCpusAllowed() {
        return cpusAllowed(PROCESS_STATUS);
    }

    static BitSet threadCpusAllowed() {
        return cpusAllowed(THREAD_STATUS);
    }

    static int threadLastProcessor() {
        String stat = read(THREAD_STAT);
        // the command name may contain blanks and parentheses: the fields start after the last ')'
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Integer.parseInt(fields[PROCESSOR_FIELD_AFTER_COMM]);
    }

    private static BitSet cpusAllowed(Path status) {
        for (String line : read(status).split("\n")) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return CpuList.parse(line.substring("Cpus_allowed_list:".length()));
            }
        }
        throw new IllegalStateException(status + " has no Cpus_allowed_list line");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
