package io.queueenterprise.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Builds {@code examples/encrypted-queue} as an application would: a separate Maven build, outside
 * this reactor, that knows the library only by its coordinates and the BOM; then runs it.
 *
 * <p>The artifacts come from {@code target/consumer-repo}, where this module's pom installed what
 * {@code ./mvnw install} publishes; third-party artifacts come from the real local repository behind
 * it (Maven's chained local repository, read-only), so nothing of ours lands in {@code ~/.m2}.
 */
@org.junit.jupiter.api.Tag("process")
class ConsumerBuildIT {
    private static final Path ROOT = Path.of(System.getProperty("qe.project.root"));
    private static final Path CONSUMER_REPO = Path.of(System.getProperty("qe.consumer.repo"));
    private static final Path REAL_REPO = Path.of(System.getProperty("qe.real.repo"));

    @TempDir
    Path tmp;

    @Test
    void theExampleBuildsByCoordinatesAndWritesAndReadsAnEncryptedQueue() throws Exception {
        Path realLibraryJar = REAL_REPO.resolve("io/queue-enterprise/queue-enterprise/0.1.0-SNAPSHOT/queue-enterprise-0.1.0-SNAPSHOT.jar");
        FileTime realJarBefore = Files.exists(realLibraryJar) ? Files.getLastModifiedTime(realLibraryJar) : null;

        Path app = copyTree(ROOT.resolve("examples/encrypted-queue"), tmp.resolve("encrypted-queue"));
        maven(app, "package");

        List<String> classpath = new ArrayList<>();
        classpath.add(app.resolve("target/encrypted-queue-example-1.0.jar").toString());
        try (Stream<Path> jars = Files.list(app.resolve("target/lib"))) {
            jars.map(Path::toString).sorted().forEach(classpath::add);
        }
        assertTrue(classpath.stream().anyMatch(p -> p.endsWith("/queue-enterprise-0.1.0-SNAPSHOT.jar")), "the library: " + classpath);
        assertTrue(classpath.stream().anyMatch(p -> p.endsWith("/queue-enterprise-crypto-0.1.0-SNAPSHOT.jar")), "its crypto module: " + classpath);
        assertFalse(classpath.stream().anyMatch(p -> p.contains("chronicle-analytics")), "analytics client excluded: " + classpath);
        assertFalse(classpath.stream().anyMatch(p -> p.contains("jmh") || p.contains("xchart") || p.contains("picocli")),
                "no benchmark or command-line libraries: " + classpath);
        // The one the build resolved is the one published into the private repository, byte for byte.
        assertEquals(Files.mismatch(app.resolve("target/lib/queue-enterprise-0.1.0-SNAPSHOT.jar"),
                CONSUMER_REPO.resolve("io/queue-enterprise/queue-enterprise/0.1.0-SNAPSHOT/queue-enterprise-0.1.0-SNAPSHOT.jar")), -1L);

        Path keys = writeKeyDirectory(tmp.resolve("keys"));
        Path queue = tmp.resolve("orders");
        List<String> command = new ArrayList<>(List.of(java(), "@" + ROOT.resolve("bin/jvm.args"),
                "-cp", String.join(":", classpath), "com.example.orders.OrdersApp", queue.toString(), keys.toString(), "2000"));
        Result run = run(command, tmp, 120);
        assertEquals(0, run.exitCode, run.output);
        assertTrue(run.output.contains("wrote 2000 orders to encrypted queue orders, read 2000 back"), run.output);

        byte[] plaintext = "BUY 100 EURUSD".getBytes(StandardCharsets.US_ASCII);
        try (Stream<Path> files = Files.list(queue)) {
            for (Path cycleFile : files.filter(p -> p.toString().endsWith(".cq4")).toList()) {
                assertFalse(contains(Files.readAllBytes(cycleFile), plaintext), "plaintext in " + cycleFile);
            }
        }
        FileTime realJarAfter = Files.exists(realLibraryJar) ? Files.getLastModifiedTime(realLibraryJar) : null;
        assertEquals(realJarBefore, realJarAfter, "nothing of ours was written into the real local repository");
    }

    /**
     * {@code examples/remote-client} builds by coordinates (the remote client through the BOM) and refuses wrong values
     * with one line naming the option, exit code 2, before any network traffic; a cluster that is not there is exit
     * code 1 with the client's reason (a loopback port nothing listens on). Its run against a real QueueCluster is the
     * operator module's RemoteClientExampleIT.
     */
    @Test
    void theRemoteClientExampleBuildsByCoordinatesAndNamesEveryWrongValue() throws Exception {
        Path app = copyTree(ROOT.resolve("examples/remote-client"), tmp.resolve("remote-client"));
        maven(app, "package");
        List<String> classpath = new ArrayList<>();
        classpath.add(app.resolve("target/remote-client-example-1.0.jar").toString());
        try (Stream<Path> jars = Files.list(app.resolve("target/lib"))) {
            jars.map(Path::toString).sorted().forEach(classpath::add);
        }
        assertTrue(classpath.stream().anyMatch(p -> p.endsWith("/queue-enterprise-remote-client-0.1.0-SNAPSHOT.jar")), "the remote client: " + classpath);
        assertFalse(classpath.stream().anyMatch(p -> p.contains("queue-enterprise-replication") || p.contains("queue-enterprise-cli")),
                "no node or command-line module of ours: " + classpath);
        Path keys = writeKeyDirectory(tmp.resolve("keys"));
        Path credential = Files.writeString(Files.createFile(tmp.resolve("credential"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))), "ab".repeat(32));
        List<String> files = List.of("--credential-file", credential.toString(), "--key-dir", keys.toString());

        record Wrong(String main, List<String> options, String named) {
        }
        List<Wrong> wrongs = List.of(
                new Wrong("Producer", List.of("--queue", "orders", "--nodes", "127.0.0.1", "--count", "5"), "--nodes: '127.0.0.1' is not HOST:PORT"),
                new Wrong("Producer", List.of("--queue", "orders", "--nodes", "127.0.0.1:70000", "--count", "5"), "--nodes: '127.0.0.1:70000' is not HOST:PORT"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--count", "5"), "--cluster needs --namespace"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "Orders", "--namespace", "t", "--count", "5"), "--cluster: 'Orders' is not a DNS label"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t"), "give --count N or --duration D"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--count", "0"), "--count: 0 is not a positive number"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--duration", "5x"), "'--duration': '5x' is not a duration"),
                new Wrong("Producer", List.of("--cluster", "orders", "--namespace", "t", "--count", "5"), "--queue (or QE_QUEUE) is required"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--count", "5",
                        "--credential-file", tmp.resolve("absent").toString()), "--credential-file: " + tmp.resolve("absent") + " is not a readable file"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--count", "5",
                        "--credential-file", credential.toString(), "--key-dir", tmp.toString()), "--key-dir: " + tmp + " is not a key directory"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--duration", "0s"), "--duration: must be above zero"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--count", "5", "--ack-timeout", "0ms"), "--ack-timeout: must be above zero"),
                new Wrong("Producer", List.of("--queue", "orders", "--nodes", "127.0.0.1:1", "--cluster", "orders", "--count", "5"), "not both"),
                new Wrong("Producer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--count", "5",
                        "--client-name", "Bad_Name"), "--client-name: 'Bad_Name' is not a DNS label"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--client-name", "audit",
                        "--identity-key", tmp.resolve("absent").toString()), "--identity-key: " + tmp.resolve("absent")
                        + " is not a readable file (mount the Secret orders-client-audit, key `key`)"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--count", "0"), "--count: 0 is not a positive number"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--idle-timeout", "0s"), "--idle-timeout: must be above zero"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--duration", "0s"), "--duration: must be above zero"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--connect-timeout", "0s"), "--connect-timeout: must be above zero"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--prefer-replica", "3"), "--prefer-replica: 3 is not 0-2"),
                new Wrong("Consumer", List.of("--queue", "orders", "--cluster", "orders", "--namespace", "t", "--after-index", "-1"), "--after-index: -1 is not an index"),
                new Wrong("Consumer", List.of("--queue", "orders", "--nodes", "127.0.0.1:1", "--nodes", "x"), "--nodes: 'x' is not HOST:PORT"));
        for (Wrong wrong : wrongs) {
            List<String> command = new ArrayList<>(List.of(java(), "@" + ROOT.resolve("bin/jvm.args"), "-cp", String.join(":", classpath),
                    "com.example.remote." + wrong.main()));
            command.addAll(wrong.options());
            if (wrong.options().stream().noneMatch(o -> o.equals("--credential-file"))) {
                command.addAll(files);
            }
            Result run = run(command, tmp, 60);
            assertEquals(2, run.exitCode, wrong + ": " + run.output);
            List<String> lines = run.output.lines().filter(l -> !l.isBlank()).toList();
            assertEquals(1, lines.size(), "one line: " + run.output);
            assertTrue(lines.get(0).contains(wrong.named()), wrong + ": " + run.output);
        }

        // right values, no cluster there: the client's reason, exit 1, nothing claimed as written
        List<String> command = new ArrayList<>(List.of(java(), "@" + ROOT.resolve("bin/jvm.args"), "-cp", String.join(":", classpath),
                "com.example.remote.Producer", "--queue", "orders", "--nodes", "127.0.0.1:" + unusedUdpPort(), "--count", "3",
                "--connect-timeout", "2s"));
        command.addAll(files);
        Result noCluster = run(command, tmp, 60);
        assertEquals(1, noCluster.exitCode, noCluster.output);
        assertTrue(noCluster.output.contains("producer: NO_LEADER: "), noCluster.output);
        assertFalse(noCluster.output.contains("ACKED"), noCluster.output);
    }

    private static int unusedUdpPort() throws IOException {
        try (java.net.DatagramSocket socket = new java.net.DatagramSocket(0, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void theBomPinsTheVersionsTheBuildIsTestedWith() throws IOException {
        String parent = Files.readString(ROOT.resolve("pom.xml"));
        String bom = Files.readString(ROOT.resolve("bom/pom.xml"));
        for (String property : List.of("chronicle.bom.version", "chronicle.queue.version", "bouncycastle.version")) {
            assertEquals(property(parent, property), property(bom, property), property);
        }
        assertEquals(property(parent, "version"), property(bom, "version"), "project version");
    }

    private static String property(String pom, String name) {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">").matcher(pom);
        assertTrue(m.find(), name + " in pom");
        return m.group(1).trim();
    }

    private void maven(Path project, String... goals) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("mvnw").toString(), "-B", "-q",
                "-f", project.resolve("pom.xml").toString(),
                "-Dmaven.repo.local=" + CONSUMER_REPO,
                "-Dmaven.repo.local.tail=" + REAL_REPO,
                "-Dmaven.repo.local.tail.ignoreAvailability=true"));
        command.addAll(Arrays.asList(goals));
        Result result = run(command, project, 300);
        assertEquals(0, result.exitCode, "the example's build:\n" + result.output);
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(List<String> command, Path workingDirectory, int timeoutSeconds) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Path log = Files.createTempFile(workingDirectory, "process-", ".log");
        builder.redirectOutput(log.toFile());
        Process process = builder.start();
        try {
            boolean finished = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
            String output = Files.readString(log);
            assertTrue(finished, "timed out after " + timeoutSeconds + " s: " + command + "\n" + output);
            return new Result(process.exitValue(), output);
        } finally {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** A key directory as an operator would mount it: owner-only files, created with those permissions. */
    private static Path writeKeyDirectory(Path dir) throws IOException {
        Files.createDirectories(dir);
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Files.write(Files.createFile(dir.resolve("1.key"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
                (java.util.HexFormat.of().formatHex(key) + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                StandardOpenOption.WRITE); // the key file format: hex and a line end
        Files.writeString(dir.resolve("active"), "1\n");
        return dir;
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** Copies the example's sources (not a target/ a user may have left there). */
    private static Path copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (dir.getFileName().toString().equals("target")) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(file, to.resolve(from.relativize(file).toString()));
                return FileVisitResult.CONTINUE;
            }
        });
        return to;
    }
}
