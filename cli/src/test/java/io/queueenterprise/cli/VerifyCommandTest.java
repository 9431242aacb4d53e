package io.queueenterprise.cli;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static io.queueenterprise.cli.QeRun.qe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code qe verify} on an intact queue, on one with a flipped bit in an excerpt's length, one cut short, and with bad usage. */
@org.junit.jupiter.api.Tag("unit")
class VerifyCommandTest {
    @TempDir
    Path tmp;

    /** Writes 50 numbered excerpts and returns where each one's bytes start in the cycle file. */
    private static long[] writeFifty(EnterpriseQueue.Builder builder) {
        long[] positions = new long[50];
        try (EnterpriseQueue queue = builder.build(); QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < 50; i++) {
                appender.write(("order-number-" + i).getBytes(StandardCharsets.UTF_8));
            }
            try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
                for (int i = 0; i < 50; i++) {
                    try (DocumentContext dc = raw.readingDocument()) {
                        positions[i] = dc.wire().bytes().readPosition();
                    }
                }
            }
        }
        return positions;
    }



    @Test
    void reportsAnIntactQueueAndOnlyTheExcerptWhoseLengthWordIsDamaged() throws IOException {
        Path keys = DemoKeys.ensure(tmp.resolve("keys")).directory();
        Path queueDir = tmp.resolve("orders");
        long[] positions = writeFifty(EnterpriseQueue.builder(queueDir).encrypted(keys));
        QeRun intact = qe("verify", queueDir.toString(), "--keys", keys.toString());
        assertEquals(0, intact.exitCode(), intact.out() + intact.err());
        assertTrue(intact.out().contains("50 excerpts read, all readable"), intact.out());

        Path cycleFile;
        try (Stream<Path> files = Files.list(queueDir)) {
            cycleFile = files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
        try (RandomAccessFile raf = new RandomAccessFile(cycleFile.toFile(), "rw")) {
            raf.seek(positions[10] - 4);
            int b = raf.read();
            raf.seek(positions[10] - 4);
            raf.write(b ^ 0x04);
        }
        QeRun damaged = qe("verify", queueDir.toString(), "--keys", keys.toString());
        assertEquals(1, damaged.exitCode(), damaged.out() + damaged.err());
        // Only the damaged excerpt is lost: every one after it is found past the damage (issue 20).
        assertTrue(damaged.out().contains("49 excerpts read, 1 problem(s)"), damaged.out());
        assertTrue(damaged.out().matches("(?s).*0x[0-9a-f]+0a: AUTHENTICATION_FAILED\\n    recover: .*"), damaged.out());
    }

    /** The probe: a cycle file cut at an excerpt boundary used to verify as "30 excerpts read, all readable". */
    @Test
    void aCycleFileCutShortIsALostRangeNamedWithHowToRecoverIt() throws IOException {
        Path queueDir = tmp.resolve("plain-orders");
        long[] positions = writeFifty(EnterpriseQueue.builder(queueDir));
        Path cycleFile;
        try (Stream<Path> files = Files.list(queueDir)) {
            cycleFile = files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
        try (RandomAccessFile raf = new RandomAccessFile(cycleFile.toFile(), "rw")) {
            raf.setLength(positions[30] - 4);
        }
        QeRun cut = qe("verify", queueDir.toString());
        assertEquals(1, cut.exitCode(), cut.out() + cut.err());
        assertTrue(cut.out().contains("30 excerpts read, 1 problem(s)"), cut.out());
        assertTrue(cut.out().matches("(?s).*0x[0-9a-f]+1e to 0x[0-9a-f]+31: lost, .*truncated.*"), cut.out());
        assertTrue(cut.out().contains(cycleFile.toString()), cut.out());
        assertTrue(cut.out().contains("recover: copy the range from a replica"), cut.out());
    }

    @Test
    void badUsageIsOneLineAndExitCode2() {
        QeRun missing = qe("verify", tmp.resolve("nowhere").toString());
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().startsWith("DIR: "), missing.err());
        QeRun ctrAlone = qe("verify", tmp.toString(), "--ctr");
        assertEquals(2, ctrAlone.exitCode());
        assertTrue(ctrAlone.err().startsWith("--ctr needs --keys"), ctrAlone.err());
        QeRun notAQueue = qe("verify", tmp.toString());
        assertEquals(1, notAQueue.exitCode(), notAQueue.out());
        assertTrue(notAQueue.out().contains("cannot be verified"), notAQueue.out());
    }
}
