package io.queueenterprise.queue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real small file system for tests that fill one up: a tmpfs of the given size mounted at a directory of the
 * test's own, unmounted on close (lazily only as a last resort, so that no mount outlives the test). Needs root:
 * the test is skipped, with that reason, without it. Shared with the replication module's tests (test-jar).
 */
public final class SmallFileSystem implements AutoCloseable {
    private final Path path;

    private SmallFileSystem(Path path) {
        this.path = path;
    }

    /** Mounts a tmpfs of {@code mebibytes} MiB at {@code at} (created if absent). */
    public static SmallFileSystem mount(Path at, int mebibytes) {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount a small tmpfs");
        try {
            Files.createDirectories(at);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!run("mount", "-t", "tmpfs", "-o", "size=" + mebibytes + "m,mode=0700", "qe-small-fs-test", at.toString())) {
            throw new IllegalStateException("could not mount a " + mebibytes + " MiB tmpfs at " + at);
        }
        return new SmallFileSystem(at);
    }

    public Path path() {
        return path;
    }

    /** Unmounts; whatever had files open there must be closed first. */
    @Override
    public void close() {
        if (!run("umount", path.toString())) {
            run("umount", "-l", path.toString());
        }
    }

    private static boolean run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            if (p.exitValue() != 0) {
                System.err.println(String.join(" ", command) + ": " + out);
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
