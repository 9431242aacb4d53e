package io.queueenterprise.queue;

import io.queueenterprise.crypto.KeyRing;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every public method of {@link EnterpriseQueue}, {@link QueueAppender} and {@link QueueTailer}, plain and encrypted,
 * driven through the states an application gets wrong or meets: the queue closed (under its appenders and tailers
 * too), the appender or tailer closed, the queue opened read-only (also on a directory whose files and folder are
 * not writable), the appender or tailer used from another thread than its owner, and a damaged cycle file. Each
 * call either works or throws a {@link QueueException} naming the queue (the type the state gets, docs/library.md
 * "Errors") — never a raw InternalError, UnsupportedOperationException, IllegalStateException or Chronicle
 * exception. The tables below are checked against the interfaces by reflection: a new public method that is not
 * in them fails {@link #everyPublicMethodIsDrivenThroughEveryState()}.
 *
 * <p>Tests run as root here, so {@code chmod a-w} does not stop writes: the "not writable" state is then Chronicle's
 * {@code readOnly} on a chmodded directory, which as a non-root user is also refused by the file system.
 */
@Timeout(300)
@org.junit.jupiter.api.Tag("unit")
@org.junit.jupiter.api.Tag("slow")
class PublicApiStatesTest {
    private static final String NAME = "states";
    private static final int EXCERPTS = 50;
    private static final KeyRing RING = TestKeys.ring(1);

    @TempDir
    Path root;
    private final AtomicInteger dirs = new AtomicInteger();

    @FunctionalInterface
    interface Call<T> {
        Object call(T target) throws Exception;
    }

    @FunctionalInterface
    interface Action {
        void run() throws Exception;
    }

    /** What a call may do in a state. */
    enum Expect {
        /** Returns normally. */
        WORKS,
        /** Throws {@link QueueStateException} whose message says why (the state's word). */
        STATE,
        /** Returns, or throws an {@link ExcerptException} (damage), never a state error. */
        WORKS_OR_DAMAGE,
        /** Returns, or throws any {@link QueueException} naming the queue. */
        WORKS_OR_TYPED
    }

    private static final Map<String, Call<EnterpriseQueue>> QUEUE_CALLS = new LinkedHashMap<>();
    private static final Map<String, Call<QueueAppender>> APPENDER_CALLS = new LinkedHashMap<>();
    private static final Map<String, Call<QueueTailer>> TAILER_CALLS = new LinkedHashMap<>();

    static {
        QUEUE_CALLS.put("createAppender()", q -> {
            q.createAppender().close();
            return null;
        });
        QUEUE_CALLS.put("createPipelinedAppender()", q -> {
            q.createPipelinedAppender().close();
            return null;
        });
        QUEUE_CALLS.put("acknowledgements()", EnterpriseQueue::acknowledgements);
        QUEUE_CALLS.put("createTailer()", q -> {
            q.createTailer().close();
            return null;
        });
        QUEUE_CALLS.put("name()", EnterpriseQueue::name);
        QUEUE_CALLS.put("path()", EnterpriseQueue::path);
        QUEUE_CALLS.put("encrypted()", EnterpriseQueue::encrypted);
        QUEUE_CALLS.put("descriptor()", EnterpriseQueue::descriptor);
        QUEUE_CALLS.put("rollCycle()", EnterpriseQueue::rollCycle);
        QUEUE_CALLS.put("firstIndex()", EnterpriseQueue::firstIndex);
        QUEUE_CALLS.put("lastIndex()", EnterpriseQueue::lastIndex);
        QUEUE_CALLS.put("chronicleQueue()", EnterpriseQueue::chronicleQueue);
        QUEUE_CALLS.put("maxExcerptLength()", EnterpriseQueue::maxExcerptLength);
        QUEUE_CALLS.put("activeKeyId()", EnterpriseQueue::activeKeyId);
        QUEUE_CALLS.put("isReplica()", EnterpriseQueue::isReplica);
        QUEUE_CALLS.put("leaderTerm()", EnterpriseQueue::leaderTerm);
        QUEUE_CALLS.put("promote(long)", q -> {
            q.promote(q.leaderTerm() + 1);
            return null;
        });
        QUEUE_CALLS.put("reloadKeys()", EnterpriseQueue::reloadKeys);
        QUEUE_CALLS.put("close()", q -> {
            q.close();
            return null;
        });
        QUEUE_CALLS.put("toString()", EnterpriseQueue::toString);

        byte[] excerpt = "state-probe".getBytes(StandardCharsets.UTF_8);
        APPENDER_CALLS.put("write(byte[],int,int)", a -> a.write(excerpt, 0, excerpt.length));
        APPENDER_CALLS.put("write(byte[])", a -> a.write(excerpt));
        APPENDER_CALLS.put("write(ByteBuffer)", a -> a.write(ByteBuffer.wrap(excerpt)));
        APPENDER_CALLS.put("write(BytesStore)", a -> a.write(Bytes.wrapForRead(excerpt)));
        APPENDER_CALLS.put("writeDocument(WriteMarshallable)", a -> a.writeDocument(w -> w.write("probe").text("state")));
        APPENDER_CALLS.put("lastIndexAppended()", QueueAppender::lastIndexAppended);
        APPENDER_CALLS.put("close()", a -> {
            a.close();
            return null;
        });

        TAILER_CALLS.put("read(byte[],int,int)", t -> t.read(new byte[1 << 16], 0, 1 << 16));
        TAILER_CALLS.put("read(byte[])", t -> t.read(new byte[1 << 16]));
        TAILER_CALLS.put("read(ByteBuffer)", t -> t.read(ByteBuffer.allocate(1 << 16)));
        TAILER_CALLS.put("read(Bytes)", t -> t.read(Bytes.allocateElasticOnHeap()));
        TAILER_CALLS.put("readDocument(ReadMarshallable)", t -> t.readDocument(w -> w.read("probe").text()));
        TAILER_CALLS.put("skip()", QueueTailer::skip);
        TAILER_CALLS.put("skipDamaged()", QueueTailer::skipDamaged);
        TAILER_CALLS.put("lastReadIndex()", QueueTailer::lastReadIndex);
        TAILER_CALLS.put("moveToIndex(long)", t -> t.moveToIndex(t.lastReadIndex() < 0 ? 0 : t.lastReadIndex()));
        TAILER_CALLS.put("toStart()", QueueTailer::toStart);
        TAILER_CALLS.put("toEnd()", QueueTailer::toEnd);
        TAILER_CALLS.put("close()", t -> {
            t.close();
            return null;
        });
    }

    private static final Set<String> INERT_QUEUE_CALLS = Set.of("name()", "path()", "encrypted()", "descriptor()",
            "rollCycle()", "chronicleQueue()", "maxExcerptLength()", "activeKeyId()", "isReplica()", "leaderTerm()",
            "close()", "toString()");

    /** A state and what each call may do in it, for each of the three kinds of object. */
    private record State(String name, String why, Function<String, Expect> queue, Function<String, Expect> appender,
                         Function<String, Expect> tailer) {
    }

    private static final List<State> STATES = List.of(
            new State("open", "",
                    m -> m.equals("reloadKeys()") || m.equals("acknowledgements()") ? Expect.WORKS_OR_TYPED : Expect.WORKS, // a plain queue has no keys, no node
                    m -> Expect.WORKS,
                    m -> Expect.WORKS),
            new State("queue closed", "closed",
                    m -> INERT_QUEUE_CALLS.contains(m) ? Expect.WORKS_OR_TYPED : Expect.STATE,
                    m -> m.equals("close()") || m.equals("lastIndexAppended()") ? Expect.WORKS_OR_TYPED : Expect.STATE,
                    m -> m.equals("close()") || m.equals("lastReadIndex()") ? Expect.WORKS_OR_TYPED : Expect.STATE),
            new State("appender or tailer closed", "closed",
                    m -> Expect.WORKS_OR_TYPED,
                    m -> m.equals("close()") ? Expect.WORKS : m.equals("lastIndexAppended()") ? Expect.WORKS_OR_TYPED : Expect.STATE,
                    m -> m.equals("close()") || m.equals("lastReadIndex()") ? Expect.WORKS : Expect.STATE),
            new State("opened read-only", "read-only",
                    m -> m.equals("createAppender()") || m.equals("createPipelinedAppender()") || m.equals("promote(long)") ? Expect.STATE : Expect.WORKS_OR_TYPED,
                    null, // a read-only queue has no appender
                    m -> Expect.WORKS),
            new State("read-only on an unwritable directory", "read-only",
                    m -> m.equals("createAppender()") || m.equals("createPipelinedAppender()") || m.equals("promote(long)") ? Expect.STATE : Expect.WORKS_OR_TYPED,
                    null,
                    m -> Expect.WORKS),
            new State("another thread", "thread",
                    m -> m.equals("reloadKeys()") || m.equals("acknowledgements()") ? Expect.WORKS_OR_TYPED : Expect.WORKS, // the queue is thread-safe
                    m -> m.equals("close()") || m.equals("lastIndexAppended()") ? Expect.WORKS_OR_TYPED : Expect.STATE,
                    m -> m.equals("close()") || m.equals("lastReadIndex()") ? Expect.WORKS_OR_TYPED : Expect.STATE),
            new State("damaged cycle file", "damage",
                    m -> m.equals("reloadKeys()") || m.equals("acknowledgements()") ? Expect.WORKS_OR_TYPED : Expect.WORKS_OR_DAMAGE,
                    m -> Expect.WORKS_OR_DAMAGE,
                    m -> Expect.WORKS_OR_DAMAGE));
    // Not a state here: a cycle file truncated under its mapping. The JVM raises the fault (SIGBUS) in JIT-compiled
    // code as an InternalError at a later safepoint, which may be after the library's call has returned (seen in a
    // run of this test: thrown from the test's own code, and from Chronicle's close), so no wrapper can promise a
    // typed error for it; the library types those it catches.

    @Test
    void everyPublicMethodIsDrivenThroughEveryState() {
        assertEquals(publicMethods(EnterpriseQueue.class), QUEUE_CALLS.keySet().stream().collect(Collectors.toCollection(TreeSet::new)),
                "EnterpriseQueue: add the new method to QUEUE_CALLS (and docs/library.md's error table)");
        assertEquals(publicMethods(QueueAppender.class), APPENDER_CALLS.keySet().stream().collect(Collectors.toCollection(TreeSet::new)),
                "QueueAppender: add the new method to APPENDER_CALLS");
        assertEquals(publicMethods(QueueTailer.class), TAILER_CALLS.keySet().stream().collect(Collectors.toCollection(TreeSet::new)),
                "QueueTailer: add the new method to TAILER_CALLS");
    }

    /**
     * Chronicle's metadata.cq4t beside the cycle files missing (a copy of the cycle files only) or unreadable: Chronicle
     * used to fall back to a read-only table store with a WARN (and a stack trace), and the next look into it threw
     * a raw UnsupportedOperationException("Read only") (IdentityPin.check, createTailer). Now the open is refused,
     * typed and named, before Chronicle is asked. As root a file cannot be made unreadable by mode bits: a
     * folder in its place makes Chronicle fail the same way.
     */
    @TestFactory
    Stream<DynamicTest> aMissingOrUnreadableMetadataFileIsATypedErrorWithoutAChronicleWarning() {
        List<DynamicTest> tests = new ArrayList<>();
        for (boolean encrypted : new boolean[]{false, true}) {
            for (boolean readOnly : new boolean[]{false, true}) {
                for (String damage : List.of("missing", "unreadable")) {
                    if (damage.equals("missing") && !readOnly) {
                        continue; // a writable open creates it again: nothing to refuse
                    }
                    tests.add(DynamicTest.dynamicTest((encrypted ? "encrypted" : "plain") + (readOnly ? ", read-only" : "")
                            + ", metadata " + damage, () -> {
                        open(encrypted, STATES.get(0)).close();
                        Path metadata = dir.resolve(net.openhft.chronicle.queue.impl.single.SingleChronicleQueue.QUEUE_METADATA_FILE);
                        Files.delete(metadata);
                        if (damage.equals("unreadable")) {
                            Files.createDirectory(metadata);
                        }
                        Map<net.openhft.chronicle.core.onoes.ExceptionKey, Integer> chronicleLog =
                                net.openhft.chronicle.core.Jvm.recordExceptions(false, false);
                        Throwable thrown;
                        try {
                            thrown = attempt(() -> {
                                try (EnterpriseQueue queue = builder(dir, encrypted).readOnly(readOnly).build();
                                     QueueTailer tailer = queue.createTailer()) {
                                    tailer.read(new byte[64]);
                                }
                            });
                        } finally {
                            net.openhft.chronicle.core.Jvm.resetExceptionHandlers();
                        }
                        assertEquals(Map.of(), chronicleLog, "Chronicle logged nothing");
                        if (!(thrown instanceof QueueConfigurationException)) {
                            throw new AssertionError("expected QueueConfigurationException, got " + thrown, thrown);
                        }
                        QueueConfigurationException e = (QueueConfigurationException) thrown;
                        assertEquals(QueueConfigurationException.Problem.UNREADABLE_METADATA, e.problem());
                        assertTrue(e.getMessage().contains(metadata.toString()), e.getMessage());
                    }));
                }
            }
        }
        return tests.stream();
    }

    private static TreeSet<String> publicMethods(Class<?> type) {
        Method[] methods = type.isInterface() ? type.getMethods() : type.getDeclaredMethods();
        return Arrays.stream(methods)
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic())
                .map(m -> m.getName() + "(" + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName)
                        .collect(Collectors.joining(",")) + ")")
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @TestFactory
    Stream<DynamicNode> everyCallWorksOrThrowsATypedErrorNamingTheQueue() {
        List<DynamicNode> kinds = new ArrayList<>();
        for (boolean encrypted : new boolean[]{false, true}) {
            List<DynamicNode> states = new ArrayList<>();
            for (State state : STATES) {
                List<DynamicNode> calls = new ArrayList<>();
                QUEUE_CALLS.forEach((m, call) -> calls.add(DynamicTest.dynamicTest("queue." + m,
                        () -> onQueue(encrypted, state, m, call))));
                if (state.appender() != null) {
                    APPENDER_CALLS.forEach((m, call) -> calls.add(DynamicTest.dynamicTest("appender." + m,
                            () -> onAppender(encrypted, state, m, call))));
                }
                TAILER_CALLS.forEach((m, call) -> calls.add(DynamicTest.dynamicTest("tailer." + m,
                        () -> onTailer(encrypted, state, m, call))));
                states.add(DynamicContainer.dynamicContainer(state.name(), calls));
            }
            kinds.add(DynamicContainer.dynamicContainer(encrypted ? "encrypted" : "plain", states));
        }
        return kinds.stream();
    }

    private void onQueue(boolean encrypted, State state, String method, Call<EnterpriseQueue> call) throws Exception {
        EnterpriseQueue queue = open(encrypted, state);
        try {
            if (state.name().equals("queue closed")) {
                queue.close();
            }
            Throwable thrown = state.name().equals("another thread") ? onAnotherThread(() -> call.call(queue)) : attempt(() -> call.call(queue));
            check(label(encrypted, state) + "queue." + method, state.queue().apply(method), state.why(), thrown);
        } finally {
            closeQuietly(queue);
        }
    }

    private void onAppender(boolean encrypted, State state, String method, Call<QueueAppender> call) throws Exception {
        EnterpriseQueue queue = open(encrypted, state);
        try {
            QueueAppender appender = state.name().equals("another thread") ? ownedByAnotherThread(queue::createAppender, a -> a.write(new byte[1]))
                    : queue.createAppender();
            switch (state.name()) {
                case "queue closed" -> queue.close();
                case "appender or tailer closed" -> appender.close();
                default -> {
                }
            }
            check(label(encrypted, state) + "appender." + method, state.appender().apply(method), state.why(), attempt(() -> call.call(appender)));
        } finally {
            releaseOwner();
            closeQuietly(queue);
        }
    }

    private void onTailer(boolean encrypted, State state, String method, Call<QueueTailer> call) throws Exception {
        EnterpriseQueue queue = open(encrypted, state);
        try {
            QueueTailer tailer = state.name().equals("another thread") ? ownedByAnotherThread(queue::createTailer, t -> t.read(new byte[64]))
                    : queue.createTailer();
            switch (state.name()) {
                case "queue closed" -> queue.close();
                case "appender or tailer closed" -> tailer.close();
                case "damaged cycle file" -> toTheDamage(tailer);
                default -> {
                }
            }
            check(label(encrypted, state) + "tailer." + method, state.tailer().apply(method), state.why(), attempt(() -> call.call(tailer)));
        } finally {
            releaseOwner();
            closeQuietly(queue);
        }
    }

    private static String label(boolean encrypted, State state) {
        return (encrypted ? "encrypted" : "plain") + ", " + state.name() + ": ";
    }

    /** Reads and skips (as an application would after each error) up to where the damage hides the rest. */
    private static void toTheDamage(QueueTailer tailer) {
        byte[] buffer = new byte[1 << 16];
        for (int i = 0; i < 12; i++) {
            try {
                if (tailer.read(buffer) < 0) {
                    return;
                }
            } catch (ExcerptException damaged) {
                tailer.skip();
            }
        }
    }

    private static void check(String call, Expect expect, String why, Throwable thrown) {
        if (thrown != null && !(thrown instanceof QueueException)) {
            throw new AssertionError(call + " threw " + thrown.getClass().getName() + " instead of a QueueException", thrown);
        }
        QueueException e = (QueueException) thrown;
        if (e != null) {
            assertEquals(NAME, e.queueName(), call + ": " + e.getMessage());
            assertTrue(e.getMessage().startsWith("queue '" + NAME + "': "), e.getMessage());
        }
        switch (expect) {
            case WORKS -> {
                if (e != null) {
                    throw new AssertionError(call + " should work but threw " + e, e);
                }
            }
            case STATE -> {
                if (!(e instanceof QueueStateException)) {
                    throw new AssertionError(call + " should throw QueueStateException (" + why + ") but "
                            + (e == null ? "returned" : "threw " + e), e);
                }
                assertTrue(e.getMessage().contains(why), call + ": the message should say '" + why + "': " + e.getMessage());
            }
            case WORKS_OR_DAMAGE -> {
                if (e != null && !(e instanceof ExcerptException)) {
                    throw new AssertionError(call + " on a damaged queue should work or report damage, but threw " + e, e);
                }
            }
            case WORKS_OR_TYPED -> {
            }
        }
    }

    private static Throwable attempt(Action call) {
        try {
            call.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private static Throwable onAnotherThread(Action call) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread other = new Thread(() -> thrown.set(attempt(call)), "states-other");
        other.start();
        other.join();
        return thrown.get();
    }

    /**
     * An appender or tailer created, and used once, by another thread that stays alive (Chronicle lets a handle
     * whose owner has ended pass to a new thread) until {@link #releaseOwner()}.
     */
    private <T> T ownedByAnotherThread(java.util.function.Supplier<T> create, Call<T> use) throws InterruptedException {
        AtomicReference<T> created = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
        ownerRelease = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = ownerRelease;
        owner = new Thread(() -> {
            try {
                T t = create.get();
                created.set(t);
                use.call(t);
            } catch (Throwable e) {
                failed.set(e);
            }
            ready.countDown();
            try {
                release.await();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "states-owner");
        owner.start();
        ready.await();
        if (failed.get() != null) {
            throw new AssertionError("setting up on the owner thread", failed.get());
        }
        return created.get();
    }

    private Thread owner;
    private java.util.concurrent.CountDownLatch ownerRelease;

    private void releaseOwner() throws InterruptedException {
        if (owner != null) {
            ownerRelease.countDown();
            owner.join();
            owner = null;
        }
    }

    private static void closeQuietly(EnterpriseQueue queue) {
        try {
            queue.close();
        } catch (RuntimeException ignored) {
            // the state under test may make close fail; the call under test was checked already
        }
    }

    private Path dir;
    private long[] positions;

    private Path cycleFile() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
    }

    /** A fresh queue of {@value #EXCERPTS} excerpts, opened in {@code state}. */
    private EnterpriseQueue open(boolean encrypted, State state) throws IOException {
        dir = root.resolve("q" + dirs.incrementAndGet());
        positions = new long[EXCERPTS];
        try (EnterpriseQueue queue = builder(dir, encrypted).build(); QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < EXCERPTS; i++) {
                appender.write(("excerpt-" + i).getBytes(StandardCharsets.UTF_8));
            }
            try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
                for (int i = 0; i < EXCERPTS; i++) {
                    try (net.openhft.chronicle.wire.DocumentContext dc = raw.readingDocument()) {
                        positions[i] = dc.wire().bytes().readPosition();
                    }
                }
            }
        }
        switch (state.name()) {
            case "opened read-only" -> {
                return builder(dir, encrypted).readOnly(true).build();
            }
            case "read-only on an unwritable directory" -> {
                setWritable(dir, false);
                try {
                    return builder(dir, encrypted).readOnly(true).build();
                } finally {
                    setWritable(dir, true); // Chronicle has mapped what it reads; the temporary folder must be deletable
                }
            }
            case "damaged cycle file" -> {
                // A flipped bit in the length word of excerpt 10 (as BadInputTest): later excerpts are hidden.
                try (RandomAccessFile raf = new RandomAccessFile(cycleFile().toFile(), "rw")) {
                    raf.seek(positions[10] - 4);
                    int b = raf.read();
                    raf.seek(positions[10] - 4);
                    raf.write(b ^ 0x04);
                }
                return builder(dir, encrypted).build();
            }
            default -> {
                return builder(dir, encrypted).build();
            }
        }
    }

    private static EnterpriseQueue.Builder builder(Path dir, boolean encrypted) {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir).name(NAME);
        return encrypted ? builder.encrypted(RING) : builder;
    }

    private static void setWritable(Path dir, boolean writable) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(writable ? "rw-r--r--" : "r--r--r--"));
            }
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(writable ? "rwxr-xr-x" : "r-xr-xr-x"));
    }
}
