package io.queueenterprise.queue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child process for {@link RequiredJvmFlagsTest}: opens a queue in {@code args[0]}, writes and reads
 * one excerpt; prints "probe: ok", or the library's exception as one line (any other throwable escapes).
 */
public final class JvmFlagsProbe {
    private JvmFlagsProbe() {
    }

    public static void main(String[] args) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(Path.of(args[0])).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            appender.write("probe".getBytes(StandardCharsets.UTF_8));
            byte[] buffer = new byte[16];
            System.out.println("probe: " + (tailer.read(buffer) == 5 ? "ok" : "read failed"));
        } catch (QueueConfigurationException e) {
            System.out.println("probe: " + e.problem() + " | " + e.getMessage());
        }
    }
}
