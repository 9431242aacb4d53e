package io.queueenterprise.queue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real writer process killed with SIGKILL in the middle of a stream leaves the queue readable:
 * every complete excerpt intact, no torn excerpt returned, and writing goes on afterwards. A kill
 * counts as inside an open excerpt when the dead writer still holds Chronicle's write lock, which
 * an appender holds from opening an excerpt to closing it; enough kills must land there.
 */
@org.junit.jupiter.api.Tag("process")
class SigkillRecoveryTest {
    private static final int MIN_ROUNDS = 3;
    private static final int MAX_ROUNDS = 20; // a kill lands inside about every other time: 2 of 20 fails ~never
    private static final int MIN_KILLS_INSIDE_AN_EXCERPT = 2;
    private static final int MIN_EXCERPTS_BEFORE_KILL = 500;

    @TempDir
    Path dir;

    @Test
    void aWriterKilledMidStreamLosesNothingComplete() throws Exception {
        Path queueDir = dir.resolve("queue");
        Path keyDir = dir.resolve("keys");
        TestKeys.writeKeyFile(keyDir, 1, TestKeys.randomMaterial());

        long[] seenPerRound = new long[MAX_ROUNDS];
        int rounds = 0;
        int killedInsideAnExcerpt = 0;
        // Where a kill lands is chance; go on until enough kills landed inside an open excerpt.
        while (rounds < MAX_ROUNDS && (rounds < MIN_ROUNDS || killedInsideAnExcerpt < MIN_KILLS_INSIDE_AN_EXCERPT)) {
            int round = rounds++;
            Process writer = startWriter(queueDir, keyDir, round);
            try {
                awaitReady(writer);
                seenPerRound[round] = readWhileWriting(queueDir, keyDir, round);
            } finally {
                writer.destroyForcibly(); // SIGKILL on Linux: no shutdown hooks, no unmapping
                assertTrue(writer.waitFor(30, TimeUnit.SECONDS), "writer died");
            }
            assertEquals(137, writer.exitValue(), "killed by SIGKILL (128 + 9)");
            long holder = ChronicleLocks.writeLockHolder(queueDir);
            if (holder == writer.pid()) {
                killedInsideAnExcerpt++;
            } else {
                assertEquals(ChronicleLocks.UNLOCKED, holder, "the write lock is held by no other process");
            }
            ChronicleLocks.recoverFromDeadWriter(queueDir);
        }
        assertTrue(killedInsideAnExcerpt >= MIN_KILLS_INSIDE_AN_EXCERPT,
                "kills inside an open excerpt: " + killedInsideAnExcerpt + " of " + rounds + " rounds");

        long[] lastSequence = new long[rounds];
        java.util.Arrays.fill(lastSequence, -1);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keyDir).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[CrashingWriter.HEADER + 65_536];
            int n;
            while ((n = tailer.read(buffer)) >= 0) {
                Record record = Record.check(buffer, n);
                assertEquals(lastSequence[record.round] + 1, record.sequence, "no gap, no duplicate in round " + record.round);
                lastSequence[record.round] = record.sequence;
            }
            for (int round = 0; round < rounds; round++) {
                assertTrue(lastSequence[round] + 1 >= seenPerRound[round],
                        "round " + round + ": every excerpt seen before the kill is still there");
            }
            // The queue accepts writes after the crash, and they read back.
            try (QueueAppender appender = queue.createAppender()) {
                appender.write("after the crash".getBytes(StandardCharsets.UTF_8));
            }
            n = tailer.read(buffer);
            assertEquals("after the crash", new String(buffer, 0, n, StandardCharsets.UTF_8));
        }
    }

    @Test
    void twoProcessesAppendAtOnceAndTheKilledOneLosesNothingComplete() throws Exception {
        Path queueDir = dir.resolve("queue");
        Path keyDir = dir.resolve("keys");
        TestKeys.writeKeyFile(keyDir, 1, TestKeys.randomMaterial());
        int childRound = 0;
        int parentRound = 1;
        int parentExcerpts = 2_000;
        Process writer = startWriter(queueDir, keyDir, childRound);
        try {
            awaitReady(writer);
            // This process appends its own self-checking excerpts while the child does the same.
            try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keyDir).build();
                 QueueAppender appender = queue.createAppender()) {
                byte[] buffer = new byte[CrashingWriter.HEADER + 256];
                CRC32 crc = new CRC32();
                for (long sequence = 0; sequence < parentExcerpts; sequence++) {
                    appender.write(buffer, 0, CrashingWriter.encode(buffer, parentRound, sequence, (int) (sequence % 256), crc));
                }
            }
            // the parent can finish before the child's first write on a loaded machine: kill it only once it wrote
            readWhileWriting(queueDir, keyDir, childRound);
        } finally {
            writer.destroyForcibly();
            assertTrue(writer.waitFor(30, TimeUnit.SECONDS), "writer died");
        }
        long[] next = new long[2];
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keyDir).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[CrashingWriter.HEADER + 65_536];
            int n;
            while ((n = tailer.read(buffer)) >= 0) {
                Record record = Record.check(buffer, n);
                assertEquals(next[record.round]++, record.sequence, "process " + record.round + ": in order, no gap");
            }
        }
        assertEquals(parentExcerpts, next[parentRound], "every excerpt of the surviving process");
        assertTrue(next[childRound] > 0, "the killed process wrote too");
    }

    /** Reads the round's excerpts as they arrive, verifying each, until enough are seen; returns the count. */
    private static long readWhileWriting(Path queueDir, Path keyDir, int round) {
        long seen = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keyDir).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[CrashingWriter.HEADER + 65_536];
            while (seen < MIN_EXCERPTS_BEFORE_KILL + round * 97L) {
                assertTrue(System.nanoTime() < deadline, "writer too slow");
                int n = tailer.read(buffer);
                if (n < 0) {
                    Thread.onSpinWait();
                    continue;
                }
                if (Record.check(buffer, n).round == round) {
                    seen++;
                }
            }
        }
        return seen;
    }

    private static Process startWriter(Path queueDir, Path keyDir, int round) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String argsFile = System.getProperty("qe.jvm.args.file");
        if (argsFile != null) {
            command.add("@" + argsFile);
        } else {
            command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(CrashingWriter.class.getName());
        command.add(queueDir.toString());
        command.add(keyDir.toString());
        command.add(Integer.toString(round));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT)
                .directory(new File(System.getProperty("user.dir"))).start();
    }

    private static void awaitReady(Process writer) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertEquals("ready", line, "writer started");
    }

    private static final class Record {
        final int round;
        final long sequence;

        private Record(int round, long sequence) {
            this.round = round;
            this.sequence = sequence;
        }

        static Record check(byte[] buffer, int length) {
            assertTrue(length >= CrashingWriter.HEADER, "excerpt shorter than its header: torn");
            ByteBuffer header = ByteBuffer.wrap(buffer, 0, CrashingWriter.HEADER);
            int round = header.getInt();
            long sequence = header.getLong();
            long crc = header.getLong();
            CRC32 actual = new CRC32();
            actual.update(buffer, CrashingWriter.HEADER, length - CrashingWriter.HEADER);
            assertEquals(crc, actual.getValue(), "round " + round + " sequence " + sequence + ": payload intact");
            for (int i = 0; i < length - CrashingWriter.HEADER; i++) {
                if (buffer[CrashingWriter.HEADER + i] != (byte) (sequence * 31 + i)) {
                    throw new AssertionError("round " + round + " sequence " + sequence + ": byte " + i + " wrong");
                }
            }
            return new Record(round, sequence);
        }
    }
}
