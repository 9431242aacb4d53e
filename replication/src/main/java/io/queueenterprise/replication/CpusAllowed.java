package io.queueenterprise.replication;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's {@code Cpus_allowed_list} (from {@code /proc/self/status}): what the node reports in its status
 * and what the engine's CPU pinning chooses from. Here, apart from both, so the status type needs nothing of the
 * engine.
 */
public final class CpusAllowed {
    private static final Logger LOG = LoggerFactory.getLogger(CpusAllowed.class);

    private CpusAllowed() {
    }

    /** The list as the kernel writes it (e.g. "2-3"); null when unknown (not Linux). */
    public static String list() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring("Cpus_allowed_list:".length()).strip();
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot read Cpus_allowed_list: " + e);
        }
        return null;
    }
}
