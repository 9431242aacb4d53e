package io.queueenterprise.queue;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import net.openhft.chronicle.queue.ExcerptTailer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The damage tests' queue: "orders" in one directory, numbered messages, and where each excerpt's bytes lie. */
final class DamageFixture {
    private final Path dir;
    private final byte[] material = TestKeys.randomMaterial();

    /** What {@link #write} wrote: each excerpt's index, and where its bytes start in its cycle file. */
    record Written(long[] indexes, long[] positions) {
    }

    DamageFixture(Path dir) {
        this.dir = dir;
    }

    EnterpriseQueue open(boolean encrypted, boolean readOnly) {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir).name("orders").readOnly(readOnly);
        if (encrypted) {
            builder.encrypted(KeyRing.single(MasterKey.of(1, material)));
        }
        return builder.build();
    }

    KeyRing ring() {
        return KeyRing.single(MasterKey.of(1, material));
    }

    static String message(int i) {
        return "order-number-" + i;
    }

    Written write(boolean encrypted, int count) {
        long[] indexes = new long[count];
        long[] positions = new long[count];
        try (EnterpriseQueue queue = open(encrypted, false); QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < count; i++) {
                indexes[i] = appender.write(message(i).getBytes(StandardCharsets.UTF_8));
            }
            try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
                for (int i = 0; i < count; i++) {
                    try (net.openhft.chronicle.wire.DocumentContext dc = raw.readingDocument()) {
                        positions[i] = dc.wire().bytes().readPosition();
                    }
                }
            }
        }
        return new Written(indexes, positions);
    }

    List<Path> cycleFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).sorted().collect(Collectors.toList());
        }
    }
}
