package io.queueenterprise.queue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The product makes no outbound network calls: Chronicle's usage analytics are off wherever a queue is opened. */
class NoOutboundCallsTest {

    @TempDir
    Path dir;

    @Test
    void openingAQueueDisablesChronicleAnalyticsEvenWithoutTheJvmFlag() {
        System.clearProperty(ChronicleSettings.ANALYTICS_DISABLE); // as in an application that lacks bin/jvm.args
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build()) {
            assertEquals("true", System.getProperty(ChronicleSettings.ANALYTICS_DISABLE));
            queue.createAppender().close();
        }
    }

    @Test
    void theAnalyticsClientIsNotOnTheClasspath() {
        assertThrows(ClassNotFoundException.class,
                () -> Class.forName("net.openhft.chronicle.analytics.Analytics"));
    }
}
