package io.queueenterprise.kubernetes.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** QueueClient's scan: what NodeInPodsIT relies on to say that no replica holds a plaintext marker. */
@org.junit.jupiter.api.Tag("unit")
class QueueClientScanTest {
    @TempDir
    Path root;

    private String scan(String marker) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        QueueClient.scan(root, marker.getBytes(StandardCharsets.UTF_8), new PrintStream(out, true, StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8).trim();
    }

    @Test
    void findsEveryMarkerAlsoAcrossAChunkBoundaryAndInNestedFiles() throws Exception {
        byte[] big = new byte[3 << 20];   // three 1 MiB chunks of zeros, like a sparse queue file
        byte[] marker = "PLAINTEXT-1".getBytes(StandardCharsets.UTF_8);
        // the second straddles the first read's end (a whole window: one chunk + marker.length - 1 bytes)
        int[] at = {0, QueueClient.SCAN_CHUNK + marker.length - 1 - 4, 2 << 20, big.length - marker.length};
        for (int offset : at) {
            System.arraycopy(marker, 0, big, offset, marker.length);
        }
        Files.write(root.resolve("20261122.cq4"), big);
        Files.createDirectories(root.resolve("sub"));
        Files.writeString(root.resolve("sub/other"), "xxPLAINTEXT-1PLAINTEXT-1");
        assertEquals("SCANNED 2 " + (big.length + 24) + " MATCHES 6", scan("PLAINTEXT-1"));
        assertEquals("SCANNED 2 " + (big.length + 24) + " MATCHES 0", scan("PLAINTEXT-2"));
    }

    @Test
    void overlappingOccurrencesCountOnce() throws Exception {
        Files.writeString(root.resolve("f"), "aaaa");
        assertEquals("SCANNED 1 4 MATCHES 2", scan("aa"));
    }
}
