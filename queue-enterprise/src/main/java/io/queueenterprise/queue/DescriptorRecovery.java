package io.queueenterprise.queue;

import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.ExcerptOpener;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.QueueIdentity;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.file.Path;

/** Proves a guessed descriptor (name, mode, keys) right by authenticating the queue's first excerpt with it. */
final class DescriptorRecovery {
    private DescriptorRecovery() {
    }

    static void proveOnFirstExcerpt(Path dir, QueueDescriptor candidate, KeyRing ring) {
        try (SingleChronicleQueue chronicle = SingleChronicleQueueBuilder.single(dir.toFile()).readOnly(true).build();
             ExcerptTailer tailer = chronicle.createTailer()) {
            byte[] envelope;
            long index;
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent()) {
                    throw new QueueConfigurationException(candidate.name(), QueueConfigurationException.Problem.DESCRIPTOR_MISSING,
                            dir + " holds no excerpt to prove the name, mode and keys with");
                }
                index = dc.index();
                Bytes<?> bytes = dc.wire().bytes();
                envelope = new byte[(int) bytes.readRemaining()];
                bytes.read(envelope);
            }
            ExcerptOpener opener = new ExcerptOpener(new QueueIdentity(candidate.name(), candidate.incarnationId()), ring,
                    candidate.cipherMode(), CryptoEngine.JCE);
            try {
                opener.verify(index, envelope, 0, envelope.length);
            } catch (EnvelopeException e) {
                throw new QueueConfigurationException(candidate.name(), QueueConfigurationException.Problem.WRONG_KEY,
                        "the name '" + candidate.name() + "', mode " + candidate.cipherMode() + " and these keys do not open"
                                + " the queue's first excerpt (" + e.description() + "): nothing was written", e);
            } finally {
                opener.destroy();
            }
        }
    }
}
