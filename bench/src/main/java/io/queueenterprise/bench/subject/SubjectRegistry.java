package io.queueenterprise.bench.subject;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.replication.AckMode;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every subject the instrument knows, keyed by name, in report order. Adding a subject (say
 * {@code library-replicated-async}) = one {@link SubjectFactory} class + one {@code register} line
 * here; the harness, the reports and the CLI pick it up by name.
 */
public final class SubjectRegistry {

    private static final Map<String, SubjectFactory> FACTORIES = new LinkedHashMap<>();

    static {
        register(new ChronicleRawSubject.Factory());
        register(new LibrarySubject.Factory("library-plain", null));
        register(new LibrarySubject.Factory("library-ctr", CipherMode.AES_128_CTR));
        register(new LibrarySubject.Factory("library-ctr-poly1305", CipherMode.AES_128_CTR_POLY1305));
        register(new ArrayBlockingQueueSubject.Factory());
        register(new SpscArrayQueueSubject.Factory());
        register(new DisruptorSubject.Factory());
        register(new AeronUdpRoundTripSubject.Factory());
        register(new ReplicatedSubject.Factory("replicated-async", AckMode.ASYNC));
        register(new ReplicatedSubject.Factory("replicated-quorum", AckMode.QUORUM));
        register(new RemoteAppendSubject.Factory("remote-append-async", AckMode.ASYNC, false));
        register(new RemoteAppendSubject.Factory("remote-append-quorum", AckMode.QUORUM, false));
        register(new RemoteAppendSubject.Factory("remote-tail", AckMode.ASYNC, true));
    }

    private SubjectRegistry() {
    }

    private static void register(SubjectFactory factory) {
        if (FACTORIES.putIfAbsent(factory.name(), factory) != null) {
            throw new IllegalStateException("duplicate subject " + factory.name());
        }
    }

    /** All subject names, in report order. */
    public static List<String> names() {
        return Collections.unmodifiableList(new ArrayList<>(FACTORIES.keySet()));
    }

    /** The factory for {@code name}; throws listing the known names if there is none. */
    public static SubjectFactory get(String name) {
        SubjectFactory f = FACTORIES.get(name);
        if (f == null) {
            throw new IllegalArgumentException("unknown subject '" + name + "'; known: " + names());
        }
        return f;
    }

    /** All factories, in report order. */
    public static List<SubjectFactory> all() {
        return List.copyOf(FACTORIES.values());
    }
}
