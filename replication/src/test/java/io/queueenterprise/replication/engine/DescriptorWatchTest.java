package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.QueueDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The leader's descriptor check: notices every replacement, and costs two stat calls and no allocation otherwise. */
@org.junit.jupiter.api.Tag("unit")
class DescriptorWatchTest {
    @TempDir
    Path dir;

    private void replace(String text, long stampMillis) throws Exception {
        Path tmp = Files.createTempFile(dir, "descriptor", ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.setLastModifiedTime(tmp, FileTime.fromMillis(stampMillis));
        Files.move(tmp, dir.resolve(QueueDescriptor.FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void aReplacedDescriptorIsNoticedAndAnUnchangedOneIsNot() throws Exception {
        DescriptorWatch watch = new DescriptorWatch(dir);
        long now = System.currentTimeMillis();
        assertTrue(watch.mayHaveChanged(now), "the first look may see anything");
        assertFalse(watch.mayHaveChanged(now), "absent and still absent");
        long old = now - 60_000;
        replace("name=orders\n", old);
        assertTrue(watch.mayHaveChanged(now), "created");
        assertFalse(watch.mayHaveChanged(now), "unchanged for a minute");
        replace("name=orders\nkey=2\n", old);
        assertTrue(watch.mayHaveChanged(now), "same stamp, other length");
        replace("name=orders\nkey=3\n", old + 5);
        assertTrue(watch.mayHaveChanged(now), "same length, other stamp");
        replace("name=orders\nkey=4\n", now - 10);
        assertTrue(watch.mayHaveChanged(now), "rewritten just now");
        replace("name=orders\nkey=5\n", now - 10);
        assertTrue(watch.mayHaveChanged(now), "same length within the stamp's granularity: still reported while recent");
        assertFalse(watch.mayHaveChanged(now + DescriptorWatch.RECENT_MILLIS), "no longer recent, unchanged");
    }

    @Test
    void checkingAnUnchangedDescriptorAllocatesNothing() throws Exception {
        replace("name=orders\n".repeat(20), System.currentTimeMillis() - 60_000);
        DescriptorWatch watch = new DescriptorWatch(dir);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long now = System.currentTimeMillis();
        int changes = 0;
        for (int i = 0; i < 20_000; i++) { // warm-up: compiled
            changes += watch.mayHaveChanged(now) ? 1 : 0;
        }
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 20_000; i++) {
            changes += watch.mayHaveChanged(now) ? 1 : 0;
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertTrue(changes == 1, "only the first look reports a change: " + changes);
        assertTrue(allocated < 20_000, "20,000 checks (about 2,000 s of a leader's checks) allocated " + allocated + " bytes");
    }
}
