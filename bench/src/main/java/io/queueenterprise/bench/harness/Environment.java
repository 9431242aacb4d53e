package io.queueenterprise.bench.harness;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Machine and JVM description for the report. */
public final class Environment {
    private Environment() {
    }

    /**
     * @param cpus        Runtime.availableProcessors()
     * @param cpuModel    "model name" from /proc/cpuinfo (or os.arch)
     * @param memTotalKb  MemTotal from /proc/meminfo, 0 if unknown
     * @param os          os.name os.version os.arch
     */
    public record Machine(int cpus, String cpuModel, long memTotalKb, String os) {
    }

    /**
     * @param version        java.runtime.version
     * @param vendor         java.vm.vendor
     * @param vm             java.vm.name
     * @param inputArguments the JVM's input arguments (bin/jvm.args expanded, plus anything added)
     * @param jvmArgsFile    the project's flag file this JVM was started with, if known
     */
    public record Jvm(String version, String vendor, String vm, List<String> inputArguments,
                      String jvmArgsFile) {
    }

    public static Machine machine() {
        String model = System.getProperty("os.arch");
        long mem = 0;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    model = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    mem = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    break;
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux: keep what we have
        }
        return new Machine(Runtime.getRuntime().availableProcessors(), model, mem,
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"));
    }

    public static Jvm jvm() {
        return new Jvm(System.getProperty("java.runtime.version"), System.getProperty("java.vm.vendor"),
                System.getProperty("java.vm.name"),
                List.copyOf(ManagementFactory.getRuntimeMXBean().getInputArguments()),
                System.getProperty("qe.jvm.args.file"));
    }
}
