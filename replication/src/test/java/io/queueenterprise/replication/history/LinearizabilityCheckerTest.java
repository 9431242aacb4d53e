package io.queueenterprise.replication.history;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault tests' independent check end to end: histories written by {@link OperationHistory}, judged by the Go
 * checker that {@code tools/linearizability/build.sh} builds (its first run on a fresh machine fetches Porcupine
 * through the Go module proxy). The model's cases are unit-tested in Go ({@code model_test.go}); here, that a
 * history the recorder writes is read as meant, in both directions.
 */
@Tag("process")
@Timeout(660)
class LinearizabilityCheckerTest {
    @TempDir
    Path tmp;

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void acknowledgedAppendsHeldAtTheirIndexesAndATimedOutOneLostAreLinearizable() throws Exception {
        OperationHistory history = new OperationHistory();
        history.append(0, "orders", bytes("one")).ok(100);
        history.append(0, "orders", bytes("two")).ok(101);
        history.append(0, "orders", bytes("lost")).timedOut(102);   // quarantined by a failover
        history.append(1, "orders", bytes("three")).ok(102);        // the new leader's, at the same index
        history.append(1, "orders", bytes("refused")).refused();
        history.append(1, "orders", bytes("no answer"));             // never returned
        TreeMap<Long, byte[]> held = new TreeMap<>();
        held.put(100L, bytes("one"));
        held.put(101L, bytes("two"));
        held.put(102L, bytes("three"));
        history.read("orders", "replica-0", System.nanoTime(), System.nanoTime(), held);

        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(history.write(tmp.resolve("h.jsonl")), tmp.resolve("h.html"));
        assertTrue(verdict.linearizable(), verdict.output());
        assertTrue(verdict.output().startsWith("LINEARIZABLE 7 operations"), verdict.output());
    }

    @Test
    void anAcknowledgedAppendMissingFromTheReplicasIsNotAndTheCheckerSaysWhich() throws Exception {
        OperationHistory history = new OperationHistory();
        history.append(0, "orders", bytes("one")).ok(100);
        history.append(0, "orders", bytes("two")).ok(101);
        TreeMap<Long, byte[]> held = new TreeMap<>();
        held.put(100L, bytes("one"));
        history.read("orders", "replica-2", System.nanoTime(), System.nanoTime(), held);

        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(history.write(tmp.resolve("h.jsonl")), tmp.resolve("h.html"));
        assertFalse(verdict.linearizable(), verdict.output());
        assertEquals(1, verdict.exitStatus(), verdict.output());
        assertTrue(verdict.output().contains("acknowledged append " + OperationHistory.valueOf(bytes("two"))
            + " at 101 is missing from the later read of replica-2"), verdict.output());
        assertTrue(Files.size(tmp.resolve("h.html")) > 0, "Porcupine's visualisation written");
    }

    @Test
    void aHistoryItCannotReadIsRefusedNotPassed() throws Exception {
        Path broken = Files.writeString(tmp.resolve("broken.jsonl"), "{\"op\":\"append\",\"value\":\"x\",\"call\":5,\"return\":1,\"outcome\":\"ok\",\"index\":1}\n");
        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(broken, tmp.resolve("b.html"));
        assertEquals(2, verdict.exitStatus(), verdict.output());
    }
}
