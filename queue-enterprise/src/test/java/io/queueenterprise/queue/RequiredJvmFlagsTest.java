package io.queueenterprise.queue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A JVM started without the module-access flags gets one sentence naming the missing flags, not
 * Chronicle's AssertionError; child JVMs, since the flags are fixed when a JVM starts.
 */
@org.junit.jupiter.api.Tag("process")
class RequiredJvmFlagsTest {
    private static final String REFLECT = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
    private static final String NIO = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";

    @TempDir
    Path dir;

    @Test
    void withoutAnyFlagOneSentenceNamesEveryRequiredFlagAndNothingIsWritten() throws Exception {
        String line = probe(List.of());
        assertTrue(line.startsWith("MISSING_JVM_FLAG | queue 'queue': "), line);
        for (String flag : List.of(REFLECT, NIO)) {
            assertTrue(line.contains(flag), "names " + flag + ": " + line);
        }
        assertFalse(Files.exists(dir.resolve("queue")), "nothing created before the check");
    }

    @Test
    void withOneFlagMissingOnlyThatFlagIsNamed() throws Exception {
        List<String> flags = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(System.getProperty("qe.jvm.args.file")))) {
            if (!line.isBlank() && !line.contains("java.base/sun.nio.ch=")) { // both the export and the open
                flags.add(line.trim());
            }
        }
        String line = probe(flags);
        assertTrue(line.startsWith("MISSING_JVM_FLAG | "), line);
        assertTrue(line.contains(NIO), line);
        assertFalse(line.contains(REFLECT), line);
    }

    @Test
    void theTwoRequiredFlagsAreEnoughToWriteAndRead() throws Exception {
        assertEquals("ok", probe(List.of(REFLECT, NIO)));
    }

    @Test
    void bothFormsOfTheMappingFlagCount() throws Exception {
        assertEquals("ok", probe(List.of(REFLECT, "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED")));
    }

    /** Runs {@link JvmFlagsProbe} in a child JVM with exactly these flags; returns its result line. */
    private String probe(List<String> jvmFlags) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(JvmFlagsProbe.class.getName());
        command.add(dir.resolve("queue").toString());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "probe finished");
            assertEquals(0, child.exitValue(), output);
            assertFalse(output.contains("Exception in thread") || output.contains("AssertionError"), output);
            List<String> lines = output.lines().filter(l -> l.startsWith("probe: ")).toList();
            assertEquals(1, lines.size(), output);
            return lines.get(0).substring("probe: ".length());
        } finally {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
